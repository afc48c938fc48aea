import { describe, expect, it } from 'vitest';
import { loadMapping } from '../../../src/manifest/mapping/load-mapping.js';
import { presetColumns, selectVariant } from '../../../src/manifest/mapping/preset-columns.js';

describe('presetColumns', () => {
  it('names what each preset requires and what it only uses, per variant', async () => {
    const shopify = presetColumns(await loadMapping('shopify'));
    expect(shopify.required).toEqual(expect.arrayContaining(['Name', 'Lineitem sku', 'Lineitem quantity']));
    expect(shopify.optional).toEqual(expect.arrayContaining(['Shipping Phone', 'Shipping Method', 'Notes']));
    for (const c of shopify.optional) expect(shopify.required).not.toContain(c);

    const woo = presetColumns(await loadMapping('woocommerce'));
    expect(woo.required).toContain('item_sku');
    expect(woo.optional).toContain('shipping_phone');
    const webtoffee = woo.variants.find((v) => v.name === 'webtoffee');
    expect(webtoffee?.required).toContain('line_item_1');
    expect(webtoffee?.required).not.toContain('item_sku');

    const odoo = presetColumns(await loadMapping('odoo'));
    expect(odoo.required).toEqual(expect.arrayContaining(['Delivery Address', 'Delivery Address/ZIP']));
    expect(odoo.required).not.toContain('Order Lines/Is a Delivery');
    const v16 = odoo.variants.find((v) => v.name === 'odoo-16');
    expect(v16?.required).toEqual(expect.arrayContaining(['Delivery Address/Zip', 'Order Lines/Is a Delivery']));
    expect(v16?.required).not.toContain('Delivery Address/ZIP');
  });

  it('selectVariant picks the variant whose columns the header has, else the mapping as written', async () => {
    const odoo = await loadMapping('odoo');
    expect(selectVariant(odoo, ['Order Reference', 'Delivery Address/ZIP']).variant).toBeUndefined();
    const chosen = selectVariant(odoo, ['Order Reference', ' Delivery Address/Name', 'Order Lines/Is a Delivery']);
    expect(chosen.variant).toBe('odoo-16');
    expect(chosen.mapping.fields?.postalCode).toBe('`Delivery Address/Zip`');
  });
});
