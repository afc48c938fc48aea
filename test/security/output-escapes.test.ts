import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkInput, humanSummary } from '../../src/cli/check-command.js';
import { printable, printableLines } from '../../src/core/printable.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { ADDRESS, ITEMS } from '../support/yaml-manifests.js';

/**
 * Control characters from an input (order numbers, countries, delivery methods, codes, file
 * names) reach a person's terminal and errors.txt only escaped: OSC 52 (write the clipboard),
 * screen clears, bidi overrides and forged lines are shown as `\x1b`, `\u202e`, `\x0a`.
 * result.json keeps the exact values (JSON escapes them itself).
 */

// ESC ] 52 ; c ; <base64> BEL: "put this in the clipboard". ESC [2J: clear the screen. U+202E: right-to-left override.
const OSC52 = '\u001b]52;c;SGVsbG8=\u0007';
const ORDER = `PO-${OSC52}1`;
// Raw control characters (line feeds aside); built from a string, as a regex literal of them trips the linter.
const RAW_CLASS = '[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]';
const RAW = new RegExp(RAW_CLASS);

/** A YAML manifest (double-quoted YAML escapes: \e is ESC, \a is BEL) whose values carry escapes. */
function hostileManifest(): string {
  const address = ADDRESS.replace('country: United States', 'country: "Narnia\\e[2J\\u202E"').replace(
    'deliveryMethod: UPS Ground',
    'deliveryMethod: "Teleport\\e]8;;http://evil.example/\\a"',
  );
  // The first order number is refused by a local rule (and named in the message); the second is clean
  // and gets as far as the account's catalogue, which refuses the country and the delivery method.
  return `version: 1
jobs:
  - orderNumber: "PO-\\e]52;c;SGVsbG8=\\a1"
${ADDRESS}    items:
${ITEMS.reorder}  - orderNumber: PO-2
${address}    items:
${ITEMS.reorder}`;
}

describe('printable', () => {
  it('escapes C0, DEL, C1, line separators and bidi controls; keeps text, tabs and non-Latin letters', () => {
    expect(printable(`a${OSC52}b`)).toBe('a\\x1b]52;c;SGVsbG8=\\x07b');
    expect(printable('x\u202ey\u2028z\u0085\u007f')).toBe('x\\u202ey\\u2028z\\x85\\x7f');
    expect(printable('line\nforged')).toBe('line\\x0aforged');
    expect(printableLines('line\nnext\r')).toBe('line\nnext\\x0d');
    expect(printable('Jürgen Müller 東京\tok')).toBe('Jürgen Müller 東京\tok');
  });
});

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

describe('hostile values through check and run', () => {
  it('check: the terminal summary and errors.txt show escapes, never the raw characters', async () => {
    const file = await h.write(`orders-\u001b[31m.yaml`, hostileManifest());
    const outcome = await checkInput(file);
    const shown = humanSummary(outcome);
    expect(shown).not.toMatch(RAW);
    expect(shown).toContain('\\x1b[31m');
    // The check may find nothing wrong locally; the run below is where the values are refused.
    if (outcome.reports?.errors) expect(await readFile(outcome.reports.errors, 'utf8')).not.toMatch(RAW);
  });

  it('run: terminal output and errors.txt escaped; result.json keeps the exact order number', async () => {
    const file = await h.write('orders.yaml', hostileManifest());
    const { stderr } = await h.cli('run', [file]);
    expect(stderr).not.toMatch(RAW);
    expect(stderr).toContain('PO-\\x1b]52;c;SGVsbG8=\\x071');
    const errors = await readFile(`${file}.errors.txt`, 'utf8');
    expect(errors).not.toMatch(RAW);
    expect(errors).toContain('Narnia\\x1b[2J\\u202e');
    const report = await h.report(file);
    expect(report.jobs[0]?.orderNumber).toBe(ORDER);
    // Nothing was sent for an order that failed its checks.
    expect(await h.sandbox.admin.jobs()).toHaveLength(0);
  });
});
