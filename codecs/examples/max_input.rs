//! Prints how many input bytes each codec takes per perf record.
use perfz_codecs::{Codec, CodecSpec, CodecVisitor, MAX_RECORD_PAYLOAD};

struct P;
impl CodecVisitor for P {
    type Output = usize;
    fn visit<C: Codec + Send + 'static>(self, c: C) -> usize {
        c.max_input(MAX_RECORD_PAYLOAD)
    }
}

fn main() {
    for s in ["none", "zstd", "lz4", "snappy"] {
        let spec: CodecSpec = s.parse().unwrap();
        println!("{s}: {}", spec.visit(P).unwrap());
    }
}
