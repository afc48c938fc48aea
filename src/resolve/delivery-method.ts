import type { DeliveryOption } from '../api/types.js';
import { foldCase, suggest } from '../core/suggest.js';
import type { Match } from './match.js';

/**
 * A delivery method as written (the option's code or its label, any case) → the option.
 * The API wants the code; people write "UPS Ground". An exact code wins over a label.
 */
export function matchDeliveryOption(input: string, options: readonly DeliveryOption[]): Match<DeliveryOption> {
  const text = input.trim();
  const exact = options.find((o) => o.code === text);
  if (exact) return { found: exact };
  const folded = foldCase(text);
  const found = options.find((o) => foldCase(o.code) === folded) ?? options.find((o) => foldCase(o.label) === folded);
  if (found) return { found };
  const suggestion =
    suggest(
      text,
      options.map((o) => o.label),
    ) ??
    suggest(
      text,
      options.map((o) => o.code),
    );
  return suggestion === undefined ? {} : { suggestion };
}
