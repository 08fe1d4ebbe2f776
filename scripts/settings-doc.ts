#!/usr/bin/env node
// Writes the tables of settings into docs/configuration.md from their declarations (src/config/settings.ts and
// rules.ts), between the document's markers:
//
//   npm run docs:settings
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configurationDocument } from '../src/config/index.ts';

const path = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
const before = readFileSync(path, 'utf8');
const after = configurationDocument(before);
if (after === before) console.log('docs/configuration.md: up to date');
else {
  writeFileSync(path, after);
  console.log('docs/configuration.md: settings written');
}
