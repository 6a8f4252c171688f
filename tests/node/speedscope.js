// perfz's speedscope exports, checked with speedscope's own package
// (tests/it/export_views.rs):
//
//   node speedscope.js check FILE        validates FILE against the schema
//       speedscope 1.25.0 ships (file-format-schema.json, by ajv) and
//       prints, as JSON, the errors and each profile's name, unit, total
//       weight and its samples' stacks (frame names, root first) in order;
//   node speedscope.js loader FILE OUT   writes OUT, the script speedscope's
//       page loads with #localProfilePath=OUT (as speedscope's own CLI does).
const fs = require('fs');
const path = require('path');

const release = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist/release');
const [mode, file, out] = process.argv.slice(2);
const text = fs.readFileSync(file);
if (mode === 'loader') {
  const js = `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(file))}, ${JSON.stringify(text.toString('base64'))})`;
  fs.writeFileSync(out, js);
  console.log(JSON.stringify({ index: path.join(release, 'index.html') }));
  process.exit(0);
}
const Ajv = require('ajv');
const schema = JSON.parse(fs.readFileSync(path.join(release, 'file-format-schema.json')));
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
const doc = JSON.parse(text);
const valid = validate(doc);
if (!valid) {
  console.log(JSON.stringify({ valid, errors: validate.errors.slice(0, 10) }));
  process.exit(0);
}
const names = doc.shared.frames.map((f) => f.name);
console.log(JSON.stringify({
  valid,
  errors: [],
  activeProfileIndex: doc.activeProfileIndex,
  profiles: doc.profiles.map((p) => ({
    name: p.name,
    unit: p.unit,
    total: p.weights.reduce((a, w) => a + w, 0),
    endValue: p.endValue,
    weights: p.weights,
    stacks: p.samples.map((s) => s.map((i) => names[i]).join(';')),
  })),
}));
