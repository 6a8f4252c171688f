//! profile.proto's messages (google/pprof), declared with prost's derive
//! (no protoc at build time); field numbers are those of profile.proto.

/// profile.proto's `Profile`: the whole profile; strings are indices into
/// `string_table`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Profile {
    /// What each of a sample's values counts: samples, then the period's unit.
    #[prost(message, repeated, tag = "1")]
    pub(crate) sample_type: Vec<ValueType>,
    /// One entry per distinct (stack, thread).
    #[prost(message, repeated, tag = "2")]
    pub(crate) sample: Vec<ProfileSample>,
    /// The mapped files, the one most samples are in first (pprof takes it for
    /// the program).
    #[prost(message, repeated, tag = "3")]
    pub(crate) mapping: Vec<ProfileMapping>,
    /// One entry per distinct frame, ids from 1.
    #[prost(message, repeated, tag = "4")]
    pub(crate) location: Vec<Location>,
    /// One entry per distinct (function, file), ids from 1.
    #[prost(message, repeated, tag = "5")]
    pub(crate) function: Vec<Function>,
    /// Every string of the profile; entry 0 is "".
    #[prost(string, repeated, tag = "6")]
    pub(crate) string_table: Vec<String>,
    /// Wall-clock time of the first sample, in ns since the Unix epoch.
    #[prost(int64, tag = "9")]
    pub(crate) time_nanos: i64,
    /// From the first sample to the last, in ns.
    #[prost(int64, tag = "10")]
    pub(crate) duration_nanos: i64,
    /// The period's type and unit (that of the second sample value).
    #[prost(message, optional, tag = "11")]
    pub(crate) period_type: Option<ValueType>,
    /// The sampling period in `period_type`'s unit (0: unknown).
    #[prost(int64, tag = "12")]
    pub(crate) period: i64,
    /// Free-form notes naming the recording (string indices).
    #[prost(int64, repeated, tag = "13")]
    pub(crate) comment: Vec<i64>,
    /// The value pprof shows by default: the second (string index of its type).
    #[prost(int64, tag = "14")]
    pub(crate) default_sample_type: i64,
}

/// profile.proto's `ValueType`: what a value measures.
#[derive(Clone, Copy, PartialEq, prost::Message)]
pub(crate) struct ValueType {
    /// String index of what is counted (`samples`, `cpu`, the event).
    #[prost(int64, tag = "1")]
    pub(crate) r#type: i64,
    /// String index of the unit (`count`, `nanoseconds`).
    #[prost(int64, tag = "2")]
    pub(crate) unit: i64,
}

/// profile.proto's `Sample`: one stack of one thread and its values.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ProfileSample {
    /// The stack's locations, leaf first.
    #[prost(uint64, repeated, tag = "1")]
    pub(crate) location_id: Vec<u64>,
    /// Samples taken, then the sum of their periods (as `sample_type` says).
    #[prost(int64, repeated, tag = "2")]
    pub(crate) value: Vec<i64>,
    /// The thread's name (`thread`), `pid` and `tid`.
    #[prost(message, repeated, tag = "3")]
    pub(crate) label: Vec<Label>,
}

/// profile.proto's `Label`: a key with a string or a number.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Label {
    /// String index of the label's name.
    #[prost(int64, tag = "1")]
    pub(crate) key: i64,
    /// String index of its value (0 for a numeric label).
    #[prost(int64, tag = "2")]
    pub(crate) str: i64,
    /// Its numeric value (0 for a string label).
    #[prost(int64, tag = "3")]
    pub(crate) num: i64,
}

/// profile.proto's `Mapping`: one mapping of a file into memory.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ProfileMapping {
    /// Unique id, from 1; locations refer to it.
    #[prost(uint64, tag = "1")]
    pub(crate) id: u64,
    /// First address mapped.
    #[prost(uint64, tag = "2")]
    pub(crate) memory_start: u64,
    /// Address just past the mapping.
    #[prost(uint64, tag = "3")]
    pub(crate) memory_limit: u64,
    /// File offset mapped at `memory_start`, in bytes.
    #[prost(uint64, tag = "4")]
    pub(crate) file_offset: u64,
    /// String index of the mapped file's path.
    #[prost(int64, tag = "5")]
    pub(crate) filename: i64,
    /// String index of the file's build id in hex (0: unknown).
    #[prost(int64, tag = "6")]
    pub(crate) build_id: i64,
    /// Its locations have function names (set for every mapping).
    #[prost(bool, tag = "7")]
    pub(crate) has_functions: bool,
    /// Its locations have inline frames (left unset).
    #[prost(bool, tag = "10")]
    pub(crate) has_inline_frames: bool,
}

/// profile.proto's `Location`: one frame (an address of a mapping).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Location {
    /// Unique id, from 1; samples refer to it.
    #[prost(uint64, tag = "1")]
    pub(crate) id: u64,
    /// The mapping the address is in (0: none).
    #[prost(uint64, tag = "2")]
    pub(crate) mapping_id: u64,
    /// The frame's address, as the callchain gives it.
    #[prost(uint64, tag = "3")]
    pub(crate) address: u64,
    /// The functions at the address, innermost (inlined) first.
    #[prost(message, repeated, tag = "4")]
    pub(crate) line: Vec<ProfileLine>,
}

/// profile.proto's `Line`: one function at a location.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ProfileLine {
    /// The [`Function`]'s id.
    #[prost(uint64, tag = "1")]
    pub(crate) function_id: u64,
    /// The source line (0: not known, as perfz writes it).
    #[prost(int64, tag = "2")]
    pub(crate) line: i64,
}

/// profile.proto's `Function`: one function of one file.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Function {
    /// Unique id, from 1; lines refer to it.
    #[prost(uint64, tag = "1")]
    pub(crate) id: u64,
    /// String index of the name as perf prints it (demangled).
    #[prost(int64, tag = "2")]
    pub(crate) name: i64,
    /// String index of the symbol as the binary has it (mangled).
    #[prost(int64, tag = "3")]
    pub(crate) system_name: i64,
    /// String index of the file it is in (the mapping's path or module).
    #[prost(int64, tag = "4")]
    pub(crate) filename: i64,
}
