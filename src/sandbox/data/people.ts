import type { AccountProfile, PaymentTransaction, ShipmentSettings, UserProfile } from '../../api/types.js';
import { DAY_MS, daysBefore, isoSeconds } from '../dates.js';
import { createRandom, deriveSeed } from '../random.js';
import type { CustomerDef } from './accounts.js';
import type { RegionDef } from './regions.js';

const FIRST = [
  'Ana',
  'Ben',
  'Chloe',
  'Dev',
  'Ema',
  'Finn',
  'Grace',
  'Hiro',
  'Isla',
  'Jonah',
  'Kara',
  'Liam',
  'Maya',
  'Noah',
];
const LAST = [
  'Ruiz',
  'Nguyen',
  'Smith',
  'Okafor',
  'Brown',
  'Walker',
  'Kim',
  'Patel',
  'Müller',
  'Taylor',
  'Lee',
  'Cohen',
];

/**
 * The customer's users. The first three ids are fixed: first = admin, second = ordinary
 * user, third = inactive (us-demo: 501, 502, 503); then ten generated from the seed.
 */
export function generateUsers(customer: CustomerDef, region: RegionDef, seed: number, start: Date): UserProfile[] {
  const rnd = createRandom(deriveSeed(seed, `users:${customer.customerId}`));
  const at = (daysAgo: number): string => daysBefore(start, daysAgo);
  const user = (
    id: number,
    firstName: string,
    lastName: string,
    active: boolean,
    lastLogin: string | null,
    loginCount: number,
  ): UserProfile => {
    const userName = `${firstName}.${lastName}`.toLowerCase().replace(/[^a-z.]/g, '');
    return {
      id,
      guid: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`,
      customerId: customer.customerId,
      customerName: customer.name,
      userName,
      firstName,
      lastName,
      emailAddress: `${userName}@example.com`,
      active,
      phone: null,
      mobile: null,
      streetAddress: null,
      addressLine2: null,
      suburb: null,
      city: null,
      state: null,
      postalCode: null,
      country: region.defaultCountry,
      locationID: 1,
      locationName: region.locations[0].name,
      defaultPage: 'dashboard',
      orderNumberPrefix: customer.assetPrefix + 'PO',
      receiveEmails: true,
      promotionRecipient: false,
      receiveInvoice: true,
      receiveInwards: false,
      textNotifyProof: false,
      textNotifyDispatch: false,
      usernameLoginOnly: false,
      lastLogin,
      loginCount,
    };
  };
  const id0 = customer.firstUserId;
  const users = [
    user(id0, 'Alex', 'Admin', true, at(1), 412),
    user(id0 + 1, 'Uma', 'User', true, at(3), 57),
    user(id0 + 2, 'Ian', 'Inactive', false, at(400), 3),
  ];
  for (let i = 0; i < 10; i++) {
    users.push(
      user(
        id0 + 9 + i,
        rnd.pick(FIRST),
        rnd.pick(LAST),
        rnd.chance(0.85),
        rnd.chance(0.9) ? at(rnd.int(0, 200)) : null,
        rnd.int(0, 300),
      ),
    );
  }
  return users;
}

export function buildProfile(customer: CustomerDef, region: RegionDef): AccountProfile {
  const street = region.code === 'us' ? '100 Commerce St' : '1 Queen St';
  const city = { us: 'Dallas', nz: 'Auckland', au: 'Sydney', uk: 'Manchester', eu: 'Berlin' }[region.code];
  return {
    id: customer.customerId,
    name: customer.name,
    priceTierCode: customer.priceTierCode,
    currency: region.currency,
    taxRateType: region.taxRate > 0 ? 'GST/VAT' : 'SalesTax',
    taxRate: region.taxRate,
    taxSystemTaxExempt: region.taxRate === 0,
    taxSystemTaxExemptReason: region.taxRate === 0 ? 'Resale certificate on file' : null,
    showPayNow: false,
    creditCardRequired: false,
    shipmentCarriersCSV: region.deliveryOptions
      .filter((d) => !d.isCollection)
      .map((d) => d.code)
      .join(','),
    excludeShipmentsCsv: null,
    courierAccountCode: null,
    courierSiteID: null,
    crmId: `CRM-${customer.customerId}`,
    accountManagerName: 'Sam Sandbox',
    accountManagerEmail: 'sam.sandbox@example.com',
    tierLast12Months: customer.priceTierCode,
    paymentTermDays: 30,
    paymentTermType: 'DaysAfterInvoice',
    entityAddress: {
      id: customer.customerId * 10,
      streetAddress: street,
      addressLine2: null,
      city,
      state: region.code === 'us' ? 'TX' : null,
      stateFull: region.code === 'us' ? 'Texas' : null,
      postalCode: region.code === 'us' ? '75201' : '1010',
      countryCode: region.defaultCountry,
      countryName: region.name,
      contactName: 'Alex Admin',
      organisation: customer.name,
      phone: '+1 555 0100',
      emailAddress: 'accounts@example.com',
      addressSummaryOneLine: `${street}, ${city}, ${region.name}`,
    },
    taxCertificates: [],
    paymentMode: 'OnAccount',
    paymentMethods: [
      {
        id: `pm_${customer.customerId}`,
        gatewayProvider: 'Stripe',
        cardName: 'Visa',
        cardNumber: '************4242',
        cardExpiry: '12/29',
        cardHolderName: 'Alex Admin',
        dateCreatedUtc: '2024-02-01T00:00:00Z',
        isDefault: true,
      },
    ],
  };
}

export function generateTransactions(
  customer: CustomerDef,
  region: RegionDef,
  seed: number,
  start: Date,
): PaymentTransaction[] {
  const rnd = createRandom(deriveSeed(seed, `transactions:${customer.customerId}`));
  const day = DAY_MS;
  const out: PaymentTransaction[] = [];
  for (let i = 1; i <= 45; i++) {
    const created = new Date(start.getTime() - (46 - i) * 3 * day - rnd.int(0, day));
    const completed = rnd.chance(0.85);
    out.push({
      id: customer.customerId * 1000 + i,
      gatewayType: 'Stripe',
      transactionStatus: completed ? 'Completed' : rnd.pick(['Pending', 'Failed']),
      createdAt: isoSeconds(created),
      completedAt: completed ? isoSeconds(new Date(created.getTime() + 60_000)) : null,
      cardName: rnd.pick(['Visa', 'Mastercard', 'Amex']),
      cardNumber: `************${rnd.int(1000, 9999)}`,
      cardExpiry: `${String(rnd.int(1, 12)).padStart(2, '0')}/${rnd.int(26, 31)}`,
      currencySettlement: region.currency,
      amountSettlement: rnd.int(2000, 250000) / 100,
      merchantEntityType: 'Invoice',
      merchantEntityId: 90000 + i,
    });
  }
  return out;
}

export function buildShipmentSettings(region: RegionDef): ShipmentSettings {
  const carriers = region.deliveryOptions.filter((d) => !d.isCollection).map((d) => d.code);
  return {
    availableCarriers: carriers,
    carrierOptions: carriers,
    receiverPays: null,
    showCustomerAddressOnLabel: true,
    handlingFee: 3.5,
    applyHandlingFeeInsteadOfFreight: false,
    jobComment: null,
    availableShipmentTypes: [],
    shipmentTypeOptions: [
      { code: 'STANDARD', name: 'Standard' },
      { code: 'EXPRESS', name: 'Express' },
    ],
    freightRates: [
      {
        carrier: carriers[0] ?? null,
        carrierName: region.deliveryOptions[0].label,
        service: 'GROUND',
        serviceName: 'Ground',
        package: 'PKG',
        packageName: 'Package',
        chargeType: 'markup_on_order',
        value: 8,
        minimum: 6.5,
        isDefault: true,
      },
    ],
  };
}
