//! Two pprof profiles as one, the base's samples negated: what `go tool
//! pprof -diff_base BASE NEW` reads (it merges them so, and marks the
//! base's samples with the label `pprof::base=true`, as here). Each
//! function's value is then the new's less the base's.

use std::collections::HashMap;

use crate::export::write::pprof_proto::{Label, Profile};
use crate::format::FormatError;

/// The label pprof marks a diff base's samples with.
const BASE_LABEL: (&str, &str) = ("pprof::base", "true");

/// A gzipped profile (as [`crate::export::write::pprof::write`] writes it), decoded.
pub(crate) fn decode(gz: &[u8]) -> Result<Profile, FormatError> {
    use prost::Message;
    use std::io::Read;
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(gz).read_to_end(&mut raw)?;
    Profile::decode(&raw[..])
        .map_err(|e| FormatError::Unsupported(format!("decoding a profile: {e}")))
}

/// A profile's value types, as (type, unit) names.
fn value_types(p: &Profile) -> Vec<(String, String)> {
    let s = |i: i64| p.string_table.get(i as usize).cloned().unwrap_or_default();
    p.sample_type
        .iter()
        .map(|v| (s(v.r#type), s(v.unit)))
        .collect()
}

/// `new` with `base`'s samples added negated (scaled to `new`'s totals
/// first, value by value, with `normalize`), its tables beside `new`'s.
pub(crate) fn merge(new: Profile, base: Profile, normalize: bool) -> Result<Profile, FormatError> {
    let mut new = comparable(new, &base)?;
    let scale = scales(&new, &base, normalize);
    let mut strings = StringIds::of(&new);
    let base_strings: Vec<i64> = (base.string_table.iter())
        .map(|s| strings.id(&mut new, s))
        .collect();
    let label = Label {
        key: strings.id(&mut new, BASE_LABEL.0),
        str: strings.id(&mut new, BASE_LABEL.1),
        num: 0,
    };
    let s = |i: i64| base_strings.get(i as usize).copied().unwrap_or(0);
    let comments: Vec<i64> = base.comment.iter().map(|&c| s(c)).collect();
    append(&mut new, base, &s, &label, &scale);
    new.comment.extend(comments);
    let note = if normalize {
        "diff: the base's samples negated (pprof::base), scaled to the new's totals"
    } else {
        "diff: the base's samples negated (pprof::base)"
    };
    let note = strings.id(&mut new, note);
    new.comment.push(note);
    Ok(new)
}

/// `new`, or where it has no samples and `base` has some, `base`'s types
/// without samples; an error where the two hold other values.
fn comparable(mut new: Profile, base: &Profile) -> Result<Profile, FormatError> {
    let types = value_types;
    // A recording without samples has no values of its own (its event is
    // unknown: it had none to choose): the other's types stand for both,
    // as for the folded diff of the pair.
    if new.sample.is_empty() && !base.sample.is_empty() {
        new = Profile {
            sample: Vec::new(),
            ..base.clone()
        };
    }
    if types(&new) != types(base) && !base.sample.is_empty() {
        return Err(FormatError::Unsupported(format!(
            "the two recordings' profiles hold other values (base {:?}, new {:?}): record both with the same event (-e)",
            types(base),
            types(&new)
        )));
    }
    Ok(new)
}

/// A profile's string table's indexes, by text.
struct StringIds(HashMap<String, i64>);

impl StringIds {
    /// The indexes of `p`'s strings.
    fn of(p: &Profile) -> StringIds {
        let ids = p.string_table.iter().enumerate();
        StringIds(ids.map(|(i, s)| (s.clone(), i as i64)).collect())
    }

    /// `s`'s index in `p`'s string table, added to it where it is not there.
    fn id(&mut self, p: &mut Profile, s: &str) -> i64 {
        let next = self.0.len() as i64;
        let i = *self.0.entry(s.to_string()).or_insert(next);
        if i == next {
            p.string_table.push(s.to_string());
        }
        i
    }
}

/// `base`'s mappings, functions, locations and samples added to `new`'s,
/// their ids moved past `new`'s and their strings `s` of `new`'s table;
/// each sample's values negated (scaled by `scale`) and labelled `label`.
fn append(new: &mut Profile, base: Profile, s: &dyn Fn(i64) -> i64, label: &Label, scale: &[f64]) {
    let map_off = new.mapping.iter().map(|m| m.id).max().unwrap_or(0);
    let loc_off = new.location.iter().map(|l| l.id).max().unwrap_or(0);
    let fn_off = new.function.iter().map(|f| f.id).max().unwrap_or(0);
    new.mapping.extend(base.mapping.into_iter().map(|mut m| {
        (m.id, m.filename, m.build_id) = (m.id + map_off, s(m.filename), s(m.build_id));
        m
    }));
    new.function.extend(base.function.into_iter().map(|mut f| {
        f.id += fn_off;
        (f.name, f.system_name, f.filename) = (s(f.name), s(f.system_name), s(f.filename));
        f
    }));
    new.location.extend(base.location.into_iter().map(|mut l| {
        l.id += loc_off;
        if l.mapping_id != 0 {
            l.mapping_id += map_off;
        }
        l.line.iter_mut().for_each(|x| x.function_id += fn_off);
        l
    }));
    new.sample.extend(base.sample.into_iter().map(|mut x| {
        x.location_id.iter_mut().for_each(|l| *l += loc_off);
        for (v, k) in x.value.iter_mut().zip(scale) {
            *v = -((*v as f64 * k) as i64);
        }
        x.label
            .iter_mut()
            .for_each(|l| (l.key, l.str) = (s(l.key), s(l.str)));
        x.label.push(label.clone());
        x
    }));
}

/// What each of the base's values is multiplied by: 1, or with
/// `normalize` the new's total over the base's (as inferno-diff-folded
/// --normalize scales the base's counts).
fn scales(new: &Profile, base: &Profile, normalize: bool) -> Vec<f64> {
    let totals = |p: &Profile| -> Vec<i64> {
        (0..p.sample_type.len())
            .map(|i| {
                p.sample
                    .iter()
                    .map(|x| x.value.get(i).copied().unwrap_or(0))
                    .sum()
            })
            .collect()
    };
    let (n, b) = (totals(new), totals(base));
    n.iter()
        .zip(&b)
        .map(|(&n, &b)| {
            if normalize && b != 0 && n != b {
                n as f64 / b as f64
            } else {
                1.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::write::pprof_proto::{
        Function, Location, ProfileLine, ProfileSample, ValueType,
    };

    /// A profile of one function `name` whose one sample has `values`.
    fn one(name: &str, values: Vec<i64>) -> Profile {
        let strings = ["", "samples", "count", name];
        Profile {
            sample_type: vec![ValueType { r#type: 1, unit: 2 }],
            sample: vec![ProfileSample {
                location_id: vec![1],
                value: values,
                label: vec![],
            }],
            location: vec![Location {
                id: 1,
                mapping_id: 0,
                address: 0x10,
                line: vec![ProfileLine {
                    function_id: 1,
                    line: 0,
                }],
            }],
            function: vec![Function {
                id: 1,
                name: 3,
                system_name: 3,
                filename: 0,
            }],
            string_table: strings.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_base_is_negated_beside_the_new_and_normalized_to_its_total() {
        let p = merge(one("f", vec![10]), one("g", vec![4]), false).unwrap();
        let base = &p.sample[1];
        assert_eq!(base.value, [-4]);
        let loc = p.location.iter().find(|l| l.id == base.location_id[0]);
        let func = p
            .function
            .iter()
            .find(|f| f.id == loc.unwrap().line[0].function_id);
        assert_eq!(p.string_table[func.unwrap().name as usize], "g");
        let l = &base.label[0];
        let s = |i: i64| p.string_table[i as usize].as_str();
        assert_eq!((s(l.key), s(l.str)), BASE_LABEL);
        let p = merge(one("f", vec![10]), one("g", vec![4]), true).unwrap();
        assert_eq!(p.sample[1].value, [-10]);
    }
}
