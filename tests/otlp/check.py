"""Reads perfz's OpenTelemetry profiles with OpenTelemetry's own generated
classes (PyPI opentelemetry-proto, in tests/tools/otlp-venv) and checks
them as the profiles.proto says they must be: every table opens with its
zero value (string 0 is ""), every index is within its table. Then prints
what the tests compare with `perfz export --format folded`: each profile's
stacks folded back into stackcollapse-perf lines, weighed by their values.

    check.py FILE [--json] [--tid]   -> JSON on stdout: {"profiles": [...],
                                        "resource": {...}, "folded": [...]}

(folded[i]: profile i's lines, stack -> weight).

With --json the file is the OTLP JSON mapping (ids in hex, as OTLP says,
turned into the base64 protobuf's own JSON mapping reads before parsing).
With --tid the lines start `comm-pid/tid`, from the samples' attributes.
Also importable: decode(bytes) and report(request, tid) for the server.
"""

import base64
import json
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.profiles.v1development import profiles_service_pb2

Request = profiles_service_pb2.ExportProfilesServiceRequest


def decode(data):
    req = Request()
    req.ParseFromString(data)
    return req


def from_json(text):
    doc = json.loads(text)
    for rp in doc.get("resourceProfiles", []):
        for sp in rp.get("scopeProfiles", []):
            for p in sp.get("profiles", []):
                if "profileId" in p:
                    p["profileId"] = hex_to_b64(p["profileId"])
    for link in doc.get("dictionary", {}).get("linkTable", []):
        for k in ("traceId", "spanId"):
            if k in link:
                link[k] = hex_to_b64(link[k])
    req = Request()
    json_format.ParseDict(doc, req)
    return req


def hex_to_b64(h):
    return base64.b64encode(bytes.fromhex(h)).decode()


def fail(why):
    raise SystemExit("check.py: " + why)


def within(index, table, what):
    if not 0 <= index < len(table):
        fail("%s %d is outside its table of %d" % (what, index, len(table)))


def check_dictionary(d):
    if not d.string_table or d.string_table[0] != "":
        fail("string_table[0] is not the empty string")
    for name in ("mapping_table", "location_table", "function_table", "link_table",
                 "attribute_table", "stack_table"):
        table = getattr(d, name)
        if not table:
            fail(name + " has no zero value at index 0")
        if table[0].ByteSize() != 0:
            fail(name + "[0] is not the zero value")
    s = d.string_table
    for m in d.mapping_table:
        within(m.filename_strindex, s, "mapping filename")
        for a in m.attribute_indices:
            within(a, d.attribute_table, "mapping attribute")
    for f in d.function_table:
        for i in (f.name_strindex, f.system_name_strindex, f.filename_strindex):
            within(i, s, "function string")
    for loc in d.location_table:
        within(loc.mapping_index, d.mapping_table, "location mapping")
        for line in loc.lines:
            within(line.function_index, d.function_table, "line function")
        for a in loc.attribute_indices:
            within(a, d.attribute_table, "location attribute")
    for a in d.attribute_table:
        within(a.key_strindex, s, "attribute key")
        within(a.unit_strindex, s, "attribute unit")
    for st in d.stack_table:
        for i in st.location_indices:
            within(i, d.location_table, "stack location")
            if i == 0:
                fail("a stack holds location 0, the null location")


def check_profile(p, d):
    s = d.string_table
    for vt in (p.sample_type, p.period_type):
        within(vt.type_strindex, s, "value type")
        within(vt.unit_strindex, s, "value unit")
    if len(p.profile_id) != 16 or not any(p.profile_id):
        fail("profile_id is not 16 bytes, not all zero")
    for a in p.attribute_indices:
        within(a, d.attribute_table, "profile attribute")
    for x in p.samples:
        within(x.stack_index, d.stack_table, "sample stack")
        within(x.link_index, d.link_table, "sample link")
        for a in x.attribute_indices:
            within(a, d.attribute_table, "sample attribute")
        if len(x.values) != 1:
            fail("a sample has %d values, not 1" % len(x.values))


def without_parameters(func):
    """Where the parameter list starts (stackcollapse-perf's rule): the first
    `(` outside <>, {} and [] that is neither a Go method's `.(` nor
    `(anonymous namespace)`."""
    depth, after_dot = 0, None
    for i, c in enumerate(func):
        if c in "<{[":
            depth += 1
        elif c in ">}])":
            depth -= 1
        elif c == "(":
            if depth == 0 and after_dot != i and not func[i:].startswith("(anonymous namespace)"):
                return i
            depth += 1
        elif c == ".":
            after_dot = i + 1
    return len(func)


def tidy(name):
    name = name.replace(";", ":").replace("\n", " ").replace("\r", " ")
    return name[:without_parameters(name)]


def frames_of(loc, d):
    """A location's frames as folded lines name them, outermost first."""
    s = d.string_table
    if not loc.lines:
        if loc.mapping_index == 0:
            return ["[unknown]"]
        m = s[d.mapping_table[loc.mapping_index].filename_strindex]
        return ["[%s]" % m.rsplit("/", 1)[-1]]
    names = [tidy(s[d.function_table[l.function_index].name_strindex]) for l in loc.lines]
    return [n for n in reversed(names) if not n.startswith("(")]


def attributes(indices, d):
    out = {}
    for i in indices:
        a = d.attribute_table[i]
        v = a.value
        out[d.string_table[a.key_strindex]] = (
            v.int_value if v.WhichOneof("value") == "int_value" else v.string_value)
    return out


def report(req, tid=False):
    d = req.dictionary
    check_dictionary(d)
    if len(req.resource_profiles) != 1:
        fail("%d resource profiles, not 1" % len(req.resource_profiles))
    rp = req.resource_profiles[0]
    resource = {kv.key: kv.value.string_value for kv in rp.resource.attributes}
    profiles, folded = [], []
    for sp in rp.scope_profiles:
        for p in sp.profiles:
            check_profile(p, d)
            kind = "%s/%s" % (d.string_table[p.sample_type.type_strindex],
                              d.string_table[p.sample_type.unit_strindex])
            lines = {}
            folded.append(lines)
            total = 0
            for x in p.samples:
                a = attributes(x.attribute_indices, d)
                head = a["thread.name"].replace(" ", "_")
                if tid:
                    head += "-%d/%d" % (a["process.pid"], a["thread.id"])
                locs = d.stack_table[x.stack_index].location_indices
                frames = [f for i in reversed(locs) for f in frames_of(d.location_table[i], d)]
                line = ";".join([head] + frames)
                lines[line] = lines.get(line, 0) + x.values[0]
                total += x.values[0]
            profiles.append({
                "type": kind,
                "period_type": "%s/%s" % (d.string_table[p.period_type.type_strindex],
                                          d.string_table[p.period_type.unit_strindex]),
                "period": p.period, "samples": len(p.samples), "total": total,
                "time_unix_nano": p.time_unix_nano, "duration_nano": p.duration_nano,
                "scope": sp.scope.name,
                "attributes": attributes(p.attribute_indices, d),
            })
    mappings = [{"file": d.string_table[m.filename_strindex],
                 "attributes": attributes(m.attribute_indices, d)} for m in d.mapping_table[1:]]
    return {"profiles": profiles, "resource": resource, "folded": folded, "mappings": mappings}


def main():
    args = sys.argv[1:]
    path = [a for a in args if not a.startswith("--")][0]
    with open(path, "rb") as f:
        data = f.read()
    req = from_json(data.decode()) if "--json" in args else decode(data)
    json.dump(report(req, "--tid" in args), sys.stdout)


if __name__ == "__main__":
    main()
