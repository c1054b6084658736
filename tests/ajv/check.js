// Compiles every JSON Schema named on the command line with Ajv in its default strict mode
// (draft 2020-12, the dialect the schemas declare) and prints a JSON report: for each file, the
// compile error and every warning strict mode logged. tests/it/schemas.rs runs it and asserts
// that both are empty; this script only reports.
"use strict";
const fs = require("fs");
const path = require("path");
const Ajv2020 = require("ajv/dist/2020");

const report = {};
for (const file of process.argv.slice(2)) {
  const warnings = [];
  const log = (...args) => warnings.push(args.map(String).join(" "));
  const ajv = new Ajv2020({ logger: { log, warn: log, error: log } });
  let error = null;
  try {
    ajv.compile(JSON.parse(fs.readFileSync(file, "utf8")));
  } catch (e) {
    error = String(e && e.message ? e.message : e);
  }
  report[path.basename(file)] = { error, warnings };
}
process.stdout.write(JSON.stringify(report, null, 1) + "\n");
