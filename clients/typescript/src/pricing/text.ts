// Text as the server orders and checks it.

/**
 * Orders strings as Rust orders `String`s: by their UTF-8 bytes, which is by code points.
 * JavaScript's `<` compares UTF-16 code units instead, which disagrees when a character above
 * U+FFFF (a surrogate pair, 0xD800-0xDFFF) meets one of U+E000-U+FFFF. Every tie the server
 * breaks by line, rule or article id follows this order.
 */
export function compareText(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      return codePointRank(x) - codePointRank(y);
    }
  }
  return a.length - b.length;
}

/** Moves surrogates above the rest of the BMP, where the code points they encode belong. */
function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) {
    return unit + 0x2000;
  }
  if (unit >= 0xe000) {
    return unit - 0x800;
  }
  return unit;
}

/** Longest identifier or name, in characters (`MAX_TEXT_CHARS`). */
const MAX_TEXT_CHARS = 255;

/**
 * Why `value` is not an identifier as the server's `check_text` reads one (1 to 255
 * characters, none of them a control character), or null when it is one.
 */
export function textProblem(value: string): string | null {
  if (value.length === 0) {
    return "must be a string of at least 1 character";
  }
  // The server counts first, then looks for control characters.
  const characters = [...value];
  if (characters.length > MAX_TEXT_CHARS) {
    return `must be at most ${MAX_TEXT_CHARS} characters`;
  }
  if (characters.some((character) => isControl(character.codePointAt(0) ?? 0))) {
    return "must not contain control characters";
  }
  return null;
}

/** Rust's `char::is_control`: the Unicode category Cc. */
function isControl(codePoint: number): boolean {
  return codePoint <= 0x1f || (codePoint >= 0x7f && codePoint <= 0x9f);
}
