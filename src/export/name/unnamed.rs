//! Which files' frames stayed without a name, most weight first, and what
//! would name them: the summary's next lines, so that "122 of 122 frames
//! without a name" says where to look.

use std::collections::HashMap;
use std::sync::Arc;

use crate::export::name::frames::Named;

/// The unnamed frames of one file (or the kernel, or JIT code).
#[derive(Debug, Clone, serde::Serialize)]
pub struct UnnamedFile {
    /// The file as the recording maps it (`[kernel.kallsyms]`, a path).
    pub file: String,
    /// Frames in it without a name, over all samples.
    pub frames: u64,
    /// Its build id (hex), where the recording gives one.
    pub build_id: Option<String>,
    /// What would name them.
    pub remedy: String,
}

/// The files of `named` frames (each held `holders[i]` times) without a
/// name, most frames first; `kernel_named`: the kernel's symbols were
/// this kernel's (or given).
pub(crate) fn unnamed_files(
    named: &[Named<'_>],
    holders: &[u64],
    kernel_named: bool,
) -> Vec<UnnamedFile> {
    // Per file: its frames, build id, and whether it is the kernel.
    type Tally<'a> = (u64, Option<&'a [u8]>, bool);
    let mut by_file: HashMap<Arc<str>, Tally<'_>> = HashMap::new();
    for (f, &n) in named.iter().zip(holders) {
        if !f.funcs.is_empty() {
            continue;
        }
        let Some(module) = &f.module else {
            continue;
        };
        let e = by_file.entry(module.clone()).or_insert((
            0,
            f.map.and_then(|m| m.build_id.as_deref()),
            f.kernel,
        ));
        e.0 += n;
    }
    let mut v: Vec<UnnamedFile> = by_file
        .into_iter()
        .map(|(file, (frames, id, kernel))| {
            let build_id = id
                .filter(|b| !b.is_empty())
                .map(crate::synth::build_id::hex);
            let remedy = remedy(&file, build_id.as_deref(), kernel, kernel_named);
            UnnamedFile {
                file: file.to_string(),
                frames,
                build_id,
                remedy,
            }
        })
        .collect();
    v.sort_by(|a, b| b.frames.cmp(&a.frames).then_with(|| a.file.cmp(&b.file)));
    v
}

/// What would name the frames of `file`.
fn remedy(file: &str, build_id: Option<&str>, kernel: bool, kernel_named: bool) -> String {
    if kernel {
        return if kernel_named {
            "this kernel's symbols are hidden: export as root, or sysctl kernel.kptr_restrict=0"
                .into()
        } else {
            "another kernel's: --kallsyms FILE, a copy of that machine's /proc/kallsyms".into()
        };
    }
    if crate::export::name::jit::is_anon(file)
        || file.starts_with("/tmp/perf-")
        || file.contains("/jit-")
    {
        return "JIT code: a perf map where it ran (node --perf-basic-prof, python -X perf, \
                java -XX:+DumpPerfMapAtExit write /tmp/perf-PID.map)"
            .into();
    }
    if !file.starts_with('/') {
        return "no file to read symbols from".into();
    }
    let by_id = match build_id {
        Some(id) => format!("debuginfod (build id {id})"),
        None => "debuginfod (no build id recorded)".into(),
    };
    if std::path::Path::new(file).exists() {
        format!(
            "stripped: {by_id}, its -dbgsym package (dpkg -S names the package), or --symfs DIR"
        )
    } else {
        format!("not here: --symfs DIR with the recording machine's files, or {by_id}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::recording::process::Mapping;

    #[test]
    fn most_weight_first_each_with_a_remedy() {
        let mut m = Mapping::whole_time(0x1000, 0x2000, 0, "/usr/bin/true");
        m.build_id = Some(Arc::from(&[0xab, 0xcd][..]));
        let frame = |funcs: Vec<Arc<str>>, module: &str, kernel: bool, map| Named {
            ip: 0x1100,
            funcs,
            map,
            module: Some(module.into()),
            kernel,
        };
        let named = [
            frame(vec![], "/usr/bin/true", false, Some(&m)),
            frame(vec![], "[kernel.kallsyms]", true, None),
            frame(vec!["main".into()], "/usr/bin/true", false, Some(&m)),
            frame(vec![], "/gone/lib.so", false, None),
        ];
        let v = unnamed_files(&named, &[3, 7, 100, 1], false);
        let files: Vec<(&str, u64)> = v.iter().map(|u| (u.file.as_str(), u.frames)).collect();
        assert_eq!(
            files,
            [
                ("[kernel.kallsyms]", 7),
                ("/usr/bin/true", 3),
                ("/gone/lib.so", 1)
            ]
        );
        assert!(v[0].remedy.contains("--kallsyms"));
        assert_eq!(v[1].build_id.as_deref(), Some("abcd"));
        assert!(v[1].remedy.contains("(build id abcd)") && v[1].remedy.contains("-dbgsym"));
        assert!(v[2].remedy.contains("--symfs"));
    }
}
