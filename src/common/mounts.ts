/**
 * The system's mount table (Linux: `/proc/self/mountinfo`), for the places that must know where other file
 * systems begin.
 *
 * @module
 */

/** A mount point as `/proc/self/mountinfo` writes it: a space, tab, newline or backslash as `\ooo`. */
export function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The mount points of this process's mount table, in its order; null where there is none to read. */
export function mountPointsSync(path: string = "/proc/self/mountinfo"): string[] | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return null;
  }
  const points: string[] = [];
  for (const line of text.split("\n")) {
    // id, parent id, major:minor, root, mount point, …
    const point = line.split(" ", 5)[4];
    if (point !== undefined) points.push(unescapeMountPath(point));
  }
  return points;
}
