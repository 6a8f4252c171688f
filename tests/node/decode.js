// Decodes a gzipped pprof profile with the npm package pprof-format (an
// independent decoder) and prints what perfz's tests compare, as JSON:
// sample types, each value's total, mappings (file, build id), the samples
// per leaf function, comments and times.
const { Profile } = require('pprof-format');
const zlib = require('zlib');
const fs = require('fs');

const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(process.argv[2])));
const str = (i) => p.stringTable.strings[Number(i)];
const byId = (list) => new Map(list.map((x) => [Number(x.id), x]));
const locations = byId(p.location);
const functions = byId(p.function);
const leaves = {};
for (const s of p.sample) {
  const loc = locations.get(Number(s.locationId[0]));
  const fn = loc && loc.line.length ? functions.get(Number(loc.line[0].functionId)) : null;
  const name = fn ? str(fn.name) : '';
  leaves[name] = (leaves[name] || 0) + Number(s.value[0]);
}
console.log(JSON.stringify({
  sampleTypes: p.sampleType.map((v) => [str(v.type), str(v.unit)]),
  totals: p.sampleType.map((_, i) => p.sample.reduce((a, s) => a + Number(s.value[i]), 0)),
  mappings: p.mapping.map((m) => [str(m.filename), str(m.buildId)]),
  leaves,
  comments: p.comment.map(str),
  timeNanos: Number(p.timeNanos),
  durationNanos: Number(p.durationNanos),
}));
