/**
 * Whether cell text is a plain decimal number: an optional sign, then digits with an optional
 * point (`24`, `-3`, `24.`, `2.50`) or a point and digits (`.5`). A hand scan rather than a
 * regular expression: cell text is hostile, and the backtracking of `\d+\.?\d*` on a long run of
 * digits that ends in a letter is quadratic. One pass over at most MAX_NUMBER_TEXT characters.
 */

/** Longer text is never a number: no quantity, amount or attribute value comes near it. */
export const MAX_NUMBER_TEXT = 100;

export function isNumberText(text: string, whole = false): boolean {
  const n = text.length;
  if (n > MAX_NUMBER_TEXT) return false;
  let i = 0;
  if (text[0] === '+' || text[0] === '-') i++;
  const intStart = i;
  while (i < n && isDigit(text.charCodeAt(i))) i++;
  const intDigits = i - intStart;
  let fracDigits = 0;
  if (!whole && i < n && text[i] === '.') {
    i++;
    const fracStart = i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    fracDigits = i - fracStart;
  }
  return i === n && (intDigits > 0 || fracDigits > 0);
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}
