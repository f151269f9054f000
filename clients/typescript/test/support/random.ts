// A seeded pseudo-random generator (sfc32, seeded by cyrb128 of a text), so that a run is
// replayed from its seed. Each world and each cart gets a generator of its own, named by the seed
// and its place, so that replaying one does not depend on the order carts were sent in.

export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(name: string) {
    [this.a, this.b, this.c, this.d] = cyrb128(name);
    for (let i = 0; i < 12; i++) {
      this.next();
    }
  }

  /** A uniform float in [0, 1). */
  next(): number {
    this.a >>>= 0;
    this.b >>>= 0;
    this.c >>>= 0;
    this.d >>>= 0;
    let t = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    t = (t + this.d) | 0;
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both included; exact up to 2^53 apart. */
  int(min: number, max: number): number {
    const span = max - min + 1;
    if (span <= 2 ** 32) {
      return min + Math.floor(this.next() * span);
    }
    // Two draws for wide ranges, so that every integer can come up.
    const high = Math.floor(this.next() * 2 ** 21);
    const low = Math.floor(this.next() * 2 ** 32);
    return min + ((high * 2 ** 32 + low) % span);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) {
      throw new RangeError("pick from nothing");
    }
    return items[this.int(0, items.length - 1)] as T;
  }

  /** One of `choices`, each with its weight. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    const total = choices.reduce((sum, [weight]) => sum + weight, 0);
    let left = this.next() * total;
    for (const [weight, value] of choices) {
      left -= weight;
      if (left < 0) {
        return value;
      }
    }
    return (choices[choices.length - 1] as readonly [number, T])[1];
  }

  /** Some of `items`, in a random order, at least `min` of them. */
  subset<T>(items: readonly T[], min = 1, max = items.length): T[] {
    const count = this.int(Math.min(min, items.length), Math.min(max, items.length));
    return this.shuffle(items).slice(0, count);
  }

  shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
    }
    return copy;
  }

  /** `length` lowercase hexadecimal digits. */
  hex(length: number): string {
    let text = "";
    while (text.length < length) {
      text += Math.floor(this.next() * 16).toString(16);
    }
    return text;
  }
}

/** Four 32-bit words from a text (cyrb128). */
function cyrb128(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}
