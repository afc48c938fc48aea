/** YAML manifests for tests that run plan, run or watch end to end against the sandbox. */

/** A delivery address written as a person would: names, resolved through the API. */
export const ADDRESS = `    deliveryAddress:
      deliveryMethod: UPS Ground
      contactName: Ana Ruiz
      streetAddress: 1 Main St
      city: Austin
      state: Texas
      postalCode: "78701"
      country: United States
`;

/** The same address written in the API's own codes, as an ERP export would. */
export const CODED_ADDRESS = `    deliveryAddress:
      deliveryMethod: UPSGND
      contactName: Ana Ruiz
      streetAddress: 1 Main St
      city: Austin
      state: TX
      postalCode: "78701"
      countryCodeISO2: US
`;

export const ITEMS = {
  print: `      - itemType: PriceCode
        code: 'DTF Full Color 10" x 10"'
        quantity: 100
        customerReference: front-logo
        externalArtworkUrl: https://cdn.example.com/artwork/front.png?X-Amz-Signature=SECRETSIG
        attributes: { Colors: 4 }
`,
  reorder: `      - { itemType: Asset, code: A10001, quantity: 50 }
`,
  stock: `      - { itemType: Stock, code: GD5000, variantCode: GD5000-BLK, sizeQuantities: { S: 10, M: 20 } }
`,
  tooFew: `      - { itemType: Asset, code: A10001, quantity: 50 }
      - itemType: PriceCode
        code: 'DTF Full Color 10" x 10"'
        quantity: 5
        customerReference: back
        externalArtworkUrl: https://cdn.example.com/artwork/back.png
        attributes: { Colors: 2 }
`,
};

export interface ManifestJob {
  orderNumber: string;
  /** One of ITEMS, or several joined. */
  items: string;
  dateDue?: string;
}

/**
 * A YAML manifest of the given jobs at ADDRESS; or, given a prefix, of `n` asset reorders
 * numbered `${prefix}-1…n` at CODED_ADDRESS.
 */
export function manifest(jobs: ManifestJob[] | string, n = 1): string {
  if (typeof jobs === 'string') {
    const numbered = Array.from({ length: n }, (_, i) => ({ orderNumber: `${jobs}-${i + 1}`, items: ITEMS.reorder }));
    return yaml(numbered, CODED_ADDRESS);
  }
  return yaml(jobs, ADDRESS);
}

function yaml(jobs: ManifestJob[], address: string): string {
  const job = (j: ManifestJob) =>
    `  - orderNumber: ${j.orderNumber}\n${j.dateDue ? `    dateDue: ${j.dateDue}\n` : ''}${address}    items:\n${j.items}`;
  return `version: 1\njobs:\n${jobs.map(job).join('')}`;
}
