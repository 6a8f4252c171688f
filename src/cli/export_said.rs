//! The line `perfz export` says on stderr: what it read and wrote, and
//! where frames stayed without a name.

/// The line perfz export says on stderr: what it read and wrote.
pub(super) fn said(done: &crate::export::Exported) -> String {
    let mut notes = Vec::new();
    if let Some(e) = &done.event {
        notes.push(format!("event {e}"));
    }
    for f in &done.cut_short {
        notes.push(format!(
            "{f} is cut short or damaged: read up to the damage, as perf reads it; `perfz recover {f}` repairs it"
        ));
    }
    if !done.other_events.is_empty() {
        notes.push(format!(
            "left out {} (one event an output; -e chooses)",
            done.other_events.join(", ")
        ));
    }
    if done.unwound > 0 {
        notes.push(format!("{} user stacks unwound (dwarf)", done.unwound));
    }
    if let Some(why) = &done.not_unwound {
        notes.push(why.clone());
    }
    notes.extend(done.debuginfod.iter().cloned());
    if !done.kernel_symbols {
        notes.push(
            "the recording is from another kernel: kernel frames keep their module, not names"
                .into(),
        );
    }
    let mut said = format!(
        "perfz export: {} samples, {} distinct stacks; {} of {} frames without a name{}",
        done.samples,
        done.stacks,
        done.unknown_frames,
        done.frames,
        notes.iter().map(|n| format!("; {n}")).collect::<String>()
    );
    // Where they are, most first: the few that matter.
    const SHOWN: usize = 5;
    for u in done.unnamed.iter().take(SHOWN) {
        said.push_str(&format!(
            "\n  {} frames in {}: {}",
            u.frames, u.file, u.remedy
        ));
    }
    if done.unnamed.len() > SHOWN {
        let rest: u64 = done.unnamed[SHOWN..].iter().map(|u| u.frames).sum();
        said.push_str(&format!(
            "\n  {rest} frames in {} more files",
            done.unnamed.len() - SHOWN
        ));
    }
    said
}
