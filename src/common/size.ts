/**
 * Sizes in bytes as people write and read them ("512M", "1.5 GiB").
 *
 * @module
 */

/** Parses a size such as "512M", "2G", "1.5g" or a number of bytes; null when it is not one. */
export function parseSize(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$/i.exec(text);
  if (match === null) return null;
  const units: Record<string, number> = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };
  const bytes = Math.floor(Number(match[1]) * units[(match[2] ?? "").toLowerCase()]!);
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : null;
}

/** "1.5 GiB", "512 MiB", for messages. */
export function formatBytes(bytes: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const shown = Number.isInteger(value) ? String(value) : value.toFixed(1);
  return `${shown} ${units[unit]}`;
}
