/**
 * The floor of `htorder check`: what a user would write to read the file with csv-parse —
 * `fs.createReadStream(file).pipe(parse())` with csv-parse's default options — counting
 * records. Timed from outside as a whole process, start-up included, exactly like `htorder
 * check`. Prints {"records": …}.
 */
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';

let records = 0;
for await (const _ of createReadStream(process.argv[2]).pipe(parse())) records++;
console.log(JSON.stringify({ records }));
