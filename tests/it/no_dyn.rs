//! The push path is monomorphized: no trait objects in it. This guards the
//! files that make up the path from ring to written buffer.

use std::path::Path;

#[test]
fn no_dyn_on_the_push_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The compressor, the cutter and the ring loop are in push/.
    let mut files = vec![root.join("src/event/ring.rs")];
    for dir in ["src/push", "codecs/src"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            } else if p.is_dir() {
                files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            }
        }
    }
    assert!(
        files.len() > 10,
        "the guard must see the push path ({} files)",
        files.len()
    );
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap();
            assert!(
                !code.contains("dyn ") && !code.contains("Box<dyn"),
                "{}:{}: trait object on the push path: {line}",
                f.display(),
                i + 1
            );
        }
    }
}
