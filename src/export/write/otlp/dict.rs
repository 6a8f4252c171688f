//! The `ProfilesDictionary` a request's profiles share: each table opens
//! with its zero value (the spec's 'null', index 0), and each stack,
//! location, function, mapping, string and attribute is held once.
//! Frames become locations (an address of a mapping, a line per function
//! there, inlined ones first); a mapping is named after the module perf
//! prints (the mapped file, `[kernel.kallsyms]`, a JIT's map), over the
//! map's place where there is one, and carries the file's build id as
//! `process.executable.build_id.gnu`.

use std::sync::Arc;

use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue};
use opentelemetry_proto::tonic::profiles::v1development as pb;
use rustc_hash::FxHashMap;

use crate::export::name::frames::Named;
use crate::export::recording::process::Mapping as Map;

/// A mapping's identity: its file, build id and place; or a module's name.
type MappingKey = (Arc<str>, Option<Arc<[u8]>>, u64, u64, u64);

/// An attribute's value, as its identity.
#[derive(PartialEq, Eq, Hash)]
enum Value {
    Str(Arc<str>),
    Int(i64),
}

/// The dictionary being built.
pub(crate) struct Dict<'f> {
    frames: &'f [Named<'f>],
    d: pb::ProfilesDictionary,
    strings: FxHashMap<String, i32>,
    mappings: FxHashMap<MappingKey, i32>,
    functions: FxHashMap<(i32, i32, i32), i32>,
    locations: FxHashMap<u32, i32>,
    attributes: FxHashMap<(i32, Value), i32>,
    stacks: FxHashMap<Box<[u32]>, i32>,
}

/// A table's next index.
fn next<T>(v: &[T]) -> i32 {
    i32::try_from(v.len()).unwrap_or(i32::MAX)
}

impl<'f> Dict<'f> {
    /// An empty dictionary (each table its zero value) over `frames`.
    pub(crate) fn new(frames: &'f [Named<'f>]) -> Dict<'f> {
        let d = pb::ProfilesDictionary {
            mapping_table: vec![pb::Mapping::default()],
            location_table: vec![pb::Location::default()],
            function_table: vec![pb::Function::default()],
            link_table: vec![pb::Link::default()],
            string_table: vec![String::new()],
            attribute_table: vec![pb::KeyValueAndUnit::default()],
            stack_table: vec![pb::Stack::default()],
        };
        let mut strings = FxHashMap::default();
        strings.insert(String::new(), 0);
        Dict {
            frames,
            d,
            strings,
            mappings: FxHashMap::default(),
            functions: FxHashMap::default(),
            locations: FxHashMap::default(),
            attributes: FxHashMap::default(),
            stacks: FxHashMap::default(),
        }
    }

    /// The dictionary, whole.
    pub(crate) fn finish(self) -> pb::ProfilesDictionary {
        self.d
    }

    /// String `s`'s index.
    pub(crate) fn string(&mut self, s: &str) -> i32 {
        if let Some(&i) = self.strings.get(s) {
            return i;
        }
        let i = next(&self.d.string_table);
        self.d.string_table.push(s.to_string());
        self.strings.insert(s.to_string(), i);
        i
    }

    /// A (type, unit) pair's value type.
    pub(crate) fn value_type(&mut self, (t, u): &(String, String)) -> pb::ValueType {
        pb::ValueType {
            type_strindex: self.string(t),
            unit_strindex: self.string(u),
        }
    }

    fn attribute(&mut self, key: &str, value: Value) -> i32 {
        let key = (self.string(key), value);
        if let Some(&i) = self.attributes.get(&key) {
            return i;
        }
        let i = next(&self.d.attribute_table);
        let v = match &key.1 {
            Value::Str(s) => any_value::Value::StringValue(s.to_string()),
            Value::Int(n) => any_value::Value::IntValue(*n),
        };
        self.d.attribute_table.push(pb::KeyValueAndUnit {
            key_strindex: key.0,
            value: Some(AnyValue { value: Some(v) }),
            unit_strindex: 0,
        });
        self.attributes.insert(key, i);
        i
    }

    /// The index of attribute `key` = `value` (a string).
    pub(crate) fn str_attribute(&mut self, key: &str, value: &Arc<str>) -> i32 {
        self.attribute(key, Value::Str(value.clone()))
    }

    /// The index of attribute `key` = `value` (an integer).
    pub(crate) fn int_attribute(&mut self, key: &str, value: i64) -> i32 {
        self.attribute(key, Value::Int(value))
    }

    /// The index of the stack of frame ids `frames` (leaf first).
    pub(crate) fn stack(&mut self, frames: &[u32]) -> i32 {
        if let Some(&i) = self.stacks.get(frames) {
            return i;
        }
        let location_indices = frames.iter().map(|&f| self.location(f)).collect();
        let i = next(&self.d.stack_table);
        self.d.stack_table.push(pb::Stack { location_indices });
        self.stacks.insert(Box::from(frames), i);
        i
    }

    /// The location of frame `id`.
    fn location(&mut self, id: u32) -> i32 {
        if let Some(&i) = self.locations.get(&id) {
            return i;
        }
        let frames = self.frames;
        let f = &frames[id as usize];
        let module = f.module.as_deref().or(f.map.map(|m| &*m.path));
        let mapping_index = match module {
            Some(name) => self.mapping(name, f.map),
            None => 0,
        };
        let file = self.string(module.unwrap_or(""));
        let lines = f
            .funcs
            .iter()
            .map(|name| pb::Line {
                function_index: self.function(name, file),
                line: 0,
                column: 0,
            })
            .collect();
        let i = next(&self.d.location_table);
        self.d.location_table.push(pb::Location {
            mapping_index,
            address: f.ip,
            lines,
            attribute_indices: Vec::new(),
        });
        self.locations.insert(id, i);
        i
    }

    /// The function `name` of file `file` (its name as perf prints it,
    /// demangled; its symbol as the binary has it).
    fn function(&mut self, name: &str, file: i32) -> i32 {
        let n = self.string(&crate::export::name::demangle::demangle(name));
        let raw = self.string(name);
        if let Some(&i) = self.functions.get(&(n, raw, file)) {
            return i;
        }
        let i = next(&self.d.function_table);
        self.d.function_table.push(pb::Function {
            name_strindex: n,
            system_name_strindex: raw,
            filename_strindex: file,
            start_line: 0,
        });
        self.functions.insert((n, raw, file), i);
        i
    }

    /// The mapping of module `name` (as perf prints it: the mapped file,
    /// `[kernel.kallsyms]`, a JIT's map) over map `m`, where there is one
    /// (its place, its file's build id as an attribute).
    fn mapping(&mut self, name: &str, m: Option<&Map>) -> i32 {
        let key: MappingKey = match m {
            Some(m) => (name.into(), m.build_id.clone(), m.start, m.end, m.pgoff),
            None => (name.into(), None, 0, 0, 0),
        };
        if let Some(&i) = self.mappings.get(&key) {
            return i;
        }
        let attribute_indices = match &key.1 {
            Some(b) => {
                let hex: Arc<str> = crate::synth::build_id::hex(b).into();
                vec![self.str_attribute("process.executable.build_id.gnu", &hex)]
            }
            None => Vec::new(),
        };
        let filename_strindex = self.string(name);
        let i = next(&self.d.mapping_table);
        self.d.mapping_table.push(pb::Mapping {
            memory_start: key.2,
            memory_limit: key.3,
            file_offset: key.4,
            filename_strindex,
            attribute_indices,
        });
        self.mappings.insert(key, i);
        i
    }
}
