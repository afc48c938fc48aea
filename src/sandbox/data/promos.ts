/** Promo codes. Expiry is relative to the sandbox clock's start, so the codes never go stale. */
export interface PromoDef {
  code: string;
  description: string;
  /** Percentage, or cents when isFixed. */
  discount: number;
  isFixed: boolean;
  active: boolean;
  /** Days from the clock start; negative means already expired. */
  expiresInDays: number;
  /** Null when not process-specific. */
  processCodes: string[] | null;
  usageExceeded: boolean;
}

export const PROMOS: readonly PromoDef[] = [
  {
    code: 'SPRING10',
    description: '10% off everything',
    discount: 10,
    isFixed: false,
    active: true,
    expiresInDays: 365,
    processCodes: null,
    usageExceeded: false,
  },
  {
    code: 'WELCOME500',
    description: '$5.00 off your order',
    discount: 500,
    isFixed: true,
    active: true,
    expiresInDays: 365,
    processCodes: null,
    usageExceeded: false,
  },
  {
    code: 'EXPIRED20',
    description: '20% off (expired)',
    discount: 20,
    isFixed: false,
    active: true,
    expiresInDays: -30,
    processCodes: null,
    usageExceeded: false,
  },
  {
    code: 'DTFONLY15',
    description: '15% off DTF transfers',
    discount: 15,
    isFixed: false,
    active: true,
    expiresInDays: 365,
    processCodes: ['DTF'],
    usageExceeded: false,
  },
  {
    code: 'RETIRED5',
    description: '5% off (deactivated)',
    discount: 5,
    isFixed: false,
    active: false,
    expiresInDays: 365,
    processCodes: null,
    usageExceeded: false,
  },
  {
    code: 'LIMIT1',
    description: '25% off (usage limit reached)',
    discount: 25,
    isFixed: false,
    active: true,
    expiresInDays: 365,
    processCodes: null,
    usageExceeded: true,
  },
];
