/**
 * What `htorder init` writes. The starter manifest is a real order that passes
 * `htorder check` and `htorder plan --sandbox` as written (the sandbox's us-demo account has
 * this asset, price code and delivery method), so a newcomer sees a green plan first and
 * then edits values one at a time.
 */

/** Where the schemas are copied, relative to the initialised folder. */
export const SCHEMA_DIR = 'schemas';

/** The default CSV template's columns (docs/manifests.md), in template order. */
export const CSV_TEMPLATE_COLUMNS: readonly string[] = [
  'orderNumber',
  'description',
  'orderComment',
  'dateDue',
  'mustDate',
  'promocode',
  'customerUserId',
  'deliveryMethod',
  'contactName',
  'organisation',
  'phone',
  'mobile',
  'emailAddress',
  'shippingInstructions',
  'streetAddress',
  'address2',
  'suburb',
  'city',
  'state',
  'postalCode',
  'country',
  'itemType',
  'code',
  'quantity',
  'customerReference',
  'externalArtworkUrl',
  'externalId',
  'isSample',
  'garment',
  'comment',
  'variantCode',
  'sizeQuantities',
];

export const STARTER_MANIFEST = `# yaml-language-server: $schema=./${SCHEMA_DIR}/manifest.schema.json
# A starter order manifest written by \`htorder init\`. Try it without credentials:
#   htorder check orders.yaml
#   htorder plan --sandbox orders.yaml
# The codes below exist in the sandbox's demo account; replace them with your account's
# price codes, asset tags and delivery methods before \`htorder run\` against the real API.
# Field names are the API's own (case-sensitive). Every field: README "Manifests in YAML and JSON".
version: 1
defaults:                          # merged into every job; a job's own values win
  deliveryAddress:
    deliveryMethod: UPS Ground     # a delivery option code (UPSGND) or its label
    contactName: Ana Ruiz
    streetAddress: 1 Main St
    city: Austin
    state: Texas                   # name or abbreviation
    postalCode: "78701"
    country: United States         # name, ISO2 or ISO3
jobs:
  - orderNumber: PO-0001           # your reference; unique; the job's identity (never sent twice)
    description: Spring team kit
    # dateDue: 2026-12-04          # optional; omitted = the earliest ship date
    items:
      - itemType: PriceCode        # a new print from artwork
        code: 'DTF Full Color 10" x 10"'
        quantity: 50
        customerReference: front-logo
        # The artwork, one of (docs/artwork.md); without it the printer waits for an upload:
        # externalArtworkUrl: https://cdn.example.com/artwork/front-logo.png
        # artwork: designs/front-logo.png   # a file here, uploaded to your artworkStore
        attributes: { Colors: 4 }
      - itemType: Asset            # a reorder of a print you ordered before
        code: A10001
        quantity: 50
`;

export const CSV_TEMPLATE = `${CSV_TEMPLATE_COLUMNS.join(',')}\n`;

export const MAPPING_SKELETON = `# yaml-language-server: $schema=./${SCHEMA_DIR}/mapping.schema.json
# An ERP column mapping written by \`htorder init\`: describes how your ERP's CSV export
# becomes htorder's default CSV template. Use it with --mapping:
#   htorder check --mapping mapping.yaml export.csv
# As written it maps nothing: an export already in the template's columns
# (orders-template.csv) passes through unchanged.
# Every key: README "ERP mappings".
version: 1
delimiter: ","                     # ";" or "\\t" for many European exports
encoding: utf-8                    # utf-8, utf-16, utf-16le, utf-16be, windows-1252
skipRows: 0                        # banner lines above the header
# Uncomment a block (the key and its lines) and rename the columns to fit your export:
# columns:                         # export column → template field
#   PO_NUM: orderNumber
#   SHIP_VIA: deliveryMethod
#   ITEM: code
#   QTY: quantity
# constants:                       # template field → value for rows that leave it blank
#   country: US
# values:                          # template field → { export value → htorder value }
#   deliveryMethod: { GRND: UPS Ground, WILLCALL: Customer Pickup }
# sizeColumns:                     # export column → size code (one quantity column per size)
#   QTY_M: M
# attributeColumns:                # export column → price-code attribute
#   COLOURS: Colors
# ignoreColumns: [UNIT_PRICE]      # export columns to read past
`;

/** Never read by htorder as it is (its name is not a config file's): examples to copy. */
export const CONFIG_EXAMPLE_NAME = 'htorder.config.example.yaml';

export const CONFIG_EXAMPLE = `# Examples written by \`htorder init\`. htorder does NOT read this file: copy what you need
# into ~/.config/htorder/config.yaml (or ./htorder.config.yaml, not writable by group or others)
# and select the profile with --profile or HTORDER_PROFILE; or, for one account, put the keys at
# the top of the file (unindented, no profile), where every command reads them without one
# (docs/configuration.md#the-one-account-way). Every key: docs/configuration.md.
# Spending guardrails (docs/guardrails.md), each off unless set: a job over a limit is not sent
# but waits for approval (exit 4; \`htorder approve\`). Uncomment and set your own amounts,
# in your account's currency:
# profiles:
#   shop:
#     maxJobCost: 500              # the estimate of one job
#     maxInputCost: 5000           # one input file's jobs together
#     maxDailyCost: 20000          # per account per day (UTC), counted in the ledger across processes
#     maxLineQuantity: 1000        # the quantity of one line
#     duplicateWindow: 7d          # same address and items as an order of another input sent within 7 days (default 12h; 0: off)
`;
