/**
 * Whether two runs' reports of the same input say the same (`npm run bench -- --reports-cli
 * FILE`): result.json, result.csv and errors.txt compared line by line, streamed (a report of a
 * million jobs is gigabytes), with what differs between any two runs left aside — the run's
 * `startedAt` and `finishedAt`, and the job numbers the API gave (the sandbox numbers jobs in the
 * order their creates arrive, which concurrency shuffles). Resolves with the first difference,
 * or undefined.
 */
import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';

export async function reportDifference(a, b) {
  for (const [suffix, normalise] of [
    ['.result.json', () => jsonLine],
    ['.result.csv', csvLine],
    ['.errors.txt', () => (l) => l],
  ]) {
    const [x, y] = [`${a}${suffix}`, `${b}${suffix}`];
    const [hasX, hasY] = await Promise.all([exists(x), exists(y)]);
    if (hasX !== hasY) return `${suffix}: written by one run only`;
    if (!hasX) continue;
    const diff = await firstDifference(x, y, normalise);
    if (diff) return `${suffix}: ${diff}`;
  }
  return undefined;
}

function jsonLine(line) {
  if (/^ {2}"(startedAt|finishedAt)": /.test(line)) return '';
  return line.replace(/"jobNumber": \d+/, '"jobNumber": N').replace(/"file": ".*"/, '"file": F');
}

/** result.csv: the `_jobNumber` cell blanked (the bench's inputs hold no quoted cells). */
function csvLine() {
  let column = -1;
  return (line) => {
    const cells = line.split(',');
    if (column < 0) column = cells.indexOf('_jobNumber');
    else if (column >= 0 && cells[column] !== undefined) cells[column] = '';
    return cells.join(',');
  };
}

/** `normaliser()` makes one line normaliser per file (result.csv's finds its column in the header). */
async function firstDifference(x, y, normaliser) {
  const [lx, ly] = [lines(x), lines(y)];
  const [nx, ny] = [normaliser(), normaliser()];
  for (let n = 1; ; n++) {
    const [a, b] = await Promise.all([lx.next(), ly.next()]);
    if (a.done && b.done) return undefined;
    if (a.done !== b.done) return `line ${n}: one file ends here`;
    if (nx(a.value) !== ny(b.value)) return `line ${n}: ${a.value.slice(0, 200)} ≠ ${b.value.slice(0, 200)}`;
  }
}

function lines(file) {
  return createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY })[
    Symbol.asyncIterator
  ]();
}

async function exists(file) {
  return access(file).then(
    () => true,
    () => false,
  );
}
