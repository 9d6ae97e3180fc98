/**
 * Renders a terminal screen captured with its colours (`tmux capture-pane -p -e`) as an SVG image: one
 * monospace text row per line, each run of text in its colour, bold, dim, italic or underlined.
 *
 * @module
 */

/** The 16 basic colours (normal, then bright), as a dark terminal theme shows them. */
const BASIC = [
  "#1e1e1e",
  "#f14c4c",
  "#23d18b",
  "#f5f543",
  "#3b8eea",
  "#d670d6",
  "#29b8db",
  "#cccccc",
  "#666666",
  "#f14c4c",
  "#23d18b",
  "#f5f543",
  "#3b8eea",
  "#d670d6",
  "#29b8db",
  "#e5e5e5",
];
const FOREGROUND = "#d4d4d4";
const BACKGROUND = "#1e1e1e";

interface Attributes {
  color: string | null;
  background: string | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
  inverse: boolean;
}

const PLAIN: Attributes = {
  color: null,
  background: null,
  bold: false,
  dim: false,
  italic: false,
  underline: false,
  inverse: false,
};

/** Options of the image. */
export interface SvgOptions {
  columns: number;
  title?: string;
  fontSize?: number;
}

/** The SVG document of the captured screen `ansi`. */
export function ansiToSvg(ansi: string, options: SvgOptions): string {
  const fontSize = options.fontSize ?? 14;
  const cell = fontSize * 0.6;
  const lineHeight = Math.round(fontSize * 1.35);
  const lines = ansi.replace(/\n+$/, "").split("\n");
  const padding = 16;
  const width = Math.ceil(options.columns * cell + padding * 2);
  const height = lines.length * lineHeight + padding * 2;
  const rows: string[] = [];
  let attributes = { ...PLAIN };
  lines.forEach((line, index) => {
    const y = padding + (index + 1) * lineHeight - Math.round(lineHeight * 0.3);
    const spans: string[] = [];
    // deno-lint-ignore no-control-regex -- SGR sequences start with ESC
    for (const part of line.split(/(\x1b\[[0-9;]*m)/)) {
      // deno-lint-ignore no-control-regex -- SGR sequences start with ESC
      const sgr = /^\x1b\[([0-9;]*)m$/.exec(part);
      if (sgr !== null) {
        attributes = applySgr(attributes, sgr[1] ?? "");
        continue;
      }
      if (part === "") continue;
      spans.push(tspan(part, attributes));
    }
    rows.push(`<text x="${padding}" y="${y}" xml:space="preserve">${spans.join("")}</text>`);
  });
  const title = options.title === undefined ? "" : `<title>${escapeXml(options.title)}</title>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
${title}<rect width="100%" height="100%" rx="8" fill="${BACKGROUND}"/>
<g font-family="'DejaVu Sans Mono', 'Menlo', 'Consolas', monospace" font-size="${fontSize}" fill="${FOREGROUND}">
${rows.join("\n")}
</g>
</svg>
`;
}

function tspan(text: string, attributes: Attributes): string {
  const styles: string[] = [];
  let color = attributes.color ?? FOREGROUND;
  if (attributes.inverse) color = attributes.background ?? BACKGROUND;
  if (color !== FOREGROUND) styles.push(`fill="${color}"`);
  if (attributes.bold) styles.push('font-weight="bold"');
  if (attributes.dim) styles.push('opacity="0.6"');
  if (attributes.italic) styles.push('font-style="italic"');
  if (attributes.underline) styles.push('text-decoration="underline"');
  const body = escapeXml(text);
  return styles.length === 0 ? body : `<tspan ${styles.join(" ")}>${body}</tspan>`;
}

/** Applies one SGR sequence's parameters. */
function applySgr(current: Attributes, parameters: string): Attributes {
  const codes = parameters === "" ? [0] : parameters.split(";").map(Number);
  let next = { ...current };
  for (let index = 0; index < codes.length; index++) {
    const code = codes[index] ?? 0;
    if (code === 0) next = { ...PLAIN };
    else if (code === 1) next.bold = true;
    else if (code === 2) next.dim = true;
    else if (code === 22) next = { ...next, bold: false, dim: false };
    else if (code === 3) next.italic = true;
    else if (code === 23) next.italic = false;
    else if (code === 4) next.underline = true;
    else if (code === 24) next.underline = false;
    else if (code === 7) next.inverse = true;
    else if (code === 27) next.inverse = false;
    else if (code >= 30 && code <= 37) next.color = BASIC[code - 30] ?? null;
    else if (code >= 90 && code <= 97) next.color = BASIC[code - 90 + 8] ?? null;
    else if (code === 39) next.color = null;
    else if (code >= 40 && code <= 47) next.background = BASIC[code - 40] ?? null;
    else if (code === 49) next.background = null;
    else if (code === 38 || code === 48) {
      const [color, used] = extendedColor(codes, index + 1);
      if (code === 38) next.color = color;
      else next.background = color;
      index += used;
    }
  }
  return next;
}

/** A 256-colour (5;n) or 24-bit (2;r;g;b) colour starting at `at`, and how many parameters it used. */
function extendedColor(codes: readonly number[], at: number): [string | null, number] {
  if (codes[at] === 5) {
    const n = codes[at + 1] ?? 0;
    if (n < 16) return [BASIC[n] ?? null, 2];
    if (n >= 232) {
      const level = 8 + (n - 232) * 10;
      return [rgb(level, level, level), 2];
    }
    const cube = n - 16;
    const step = (value: number) => (value === 0 ? 0 : 55 + value * 40);
    return [rgb(step(Math.floor(cube / 36)), step(Math.floor(cube / 6) % 6), step(cube % 6)), 2];
  }
  if (codes[at] === 2) return [rgb(codes[at + 1] ?? 0, codes[at + 2] ?? 0, codes[at + 3] ?? 0), 4];
  return [null, 0];
}

function rgb(red: number, green: number, blue: number): string {
  return `#${[red, green, blue].map((value) => value.toString(16).padStart(2, "0")).join("")}`;
}

function escapeXml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}
