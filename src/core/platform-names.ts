/** How the shop platforms the presets read are named in messages; in core so that a command printing one loads no manifest code. */
const PLATFORM_NAMES: Readonly<Record<string, string>> = {
  shopify: 'Shopify',
  woocommerce: 'WooCommerce',
  odoo: 'Odoo',
  etsy: 'Etsy',
  bigcommerce: 'BigCommerce',
  squarespace: 'Squarespace',
  wix: 'Wix',
  amazon: 'Amazon',
  ebay: 'eBay',
};

/** The platform a preset reads the exports of (`woocommerce` → WooCommerce); an unknown preset by its name. */
export function platformName(preset: string): string {
  return PLATFORM_NAMES[preset] ?? preset;
}

/** `a Shopify export`, `an Odoo export`. */
export function aPlatform(preset: string): string {
  const name = platformName(preset);
  return `${/^[AEIOU]/i.test(name) ? 'an' : 'a'} ${name}`;
}
