/**
 * The manifests `npm run bench` runs: JOBS jobs of LINES asset reorders each, one delivery
 * address per job (the same for every job, named after the run: each run is new content, not a
 * suspected duplicate of the run before; with `customers`, a contact of its own per job, as a
 * shop's night of orders from many customers, so that every order is content of its own). As a
 * CSV of the default template (the order's cells on its first row, the order number on every
 * row, as spreadsheets and most exports write them), streamed to disk in constant memory; or as
 * YAML, the address in `defaults`.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';

const ADDRESS = {
  deliveryMethod: 'UPS Ground',
  streetAddress: '1 Main St',
  city: 'Austin',
  state: 'Texas',
  postalCode: '78701',
  country: 'United States',
};

const orderNumber = (tag, j) => `${tag}-${String(j).padStart(6, '0')}`;
const code = (assets, j, k) => assets[(j + k) % assets.length];
const quantity = (j, k) => 50 + ((j + k) % 5) * 10;

/** Writes the manifest of `jobs` jobs to `file` (`.csv` or `.yaml`). */
export async function writeRunManifest(file, { format, tag, jobs, lines, assets, customers = false }) {
  if (format === 'yaml') return writeFile(file, yamlManifest(tag, jobs, lines, assets, customers));
  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  const a = ADDRESS;
  let text =
    'orderNumber,description,deliveryMethod,contactName,streetAddress,city,state,postalCode,country,itemType,code,quantity\n';
  const place = `${a.streetAddress},${a.city},${a.state},${a.postalCode},${a.country}`;
  for (let j = 1; j <= jobs; j++) {
    const order = orderNumber(tag, j);
    const first = `${a.deliveryMethod},${contact(tag, j, customers)},${place}`;
    for (let k = 0; k < lines; k++) {
      const head = k === 0 ? `${order},Bench reorder ${j},${first}` : `${order},,,,,,,,`;
      text += `${head},Asset,${code(assets, j, k)},${quantity(j, k)}\n`;
    }
    if (text.length > 1 << 20) {
      if (!out.write(text)) await once(out, 'drain');
      text = '';
    }
  }
  out.end(text);
  await once(out, 'finish');
}

/** The job's contact: the run's, or with `customers` the job's own. */
function contact(tag, j, customers) {
  return customers ? `Ana Ruiz ${tag} ${j}` : `Ana Ruiz ${tag}`;
}

function yamlManifest(tag, jobs, lines, assets, customers) {
  const a = ADDRESS;
  const out = [
    'version: 1',
    'defaults:',
    '  deliveryAddress:',
    `    deliveryMethod: ${a.deliveryMethod}`,
    `    contactName: Ana Ruiz ${tag}`,
    `    streetAddress: ${a.streetAddress}`,
    `    city: ${a.city}`,
    `    state: ${a.state}`,
    `    postalCode: "${a.postalCode}"`,
    `    country: ${a.country}`,
    'jobs:',
  ];
  for (let j = 1; j <= jobs; j++) {
    out.push(`  - orderNumber: ${orderNumber(tag, j)}`, `    description: Bench reorder ${j}`);
    if (customers) out.push('    deliveryAddress:', `      contactName: ${contact(tag, j, customers)}`);
    out.push('    items:');
    for (let k = 0; k < lines; k++)
      out.push(`      - { itemType: Asset, code: ${code(assets, j, k)}, quantity: ${quantity(j, k)} }`);
  }
  return `${out.join('\n')}\n`;
}
