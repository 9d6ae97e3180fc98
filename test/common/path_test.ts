/**
 * src/common/path.ts means what node:path's posix functions mean, on a corpus of awkward paths.
 */
import { equal } from "node:assert/strict";
import { posix as node } from "node:path";
import { posix } from "../../src/common/path.ts";

/** Every path of up to four parts from a small alphabet of segments and separators, and some extras. */
function corpus(): string[] {
  const parts = ["", "/", "//", "a", "bc", ".", "..", "a.txt", ".hidden", "a/", "b.c.", ".e.f"];
  const paths = new Set<string>(["", "/", "///", "./", "../", "a//b//", "/..", "/../a", "a/../..", "..."]);
  const grow = (prefix: string, depth: number) => {
    paths.add(prefix);
    if (depth === 0) return;
    for (const part of parts) grow(prefix + part, depth - 1);
  };
  grow("", 4);
  return [...paths];
}

const PATHS = corpus();
const SOME = PATHS.filter((_, index) => index % 61 === 0);

Deno.test("normalize, isAbsolute, dirname, basename and extname agree with node:path on every path of the corpus", () => {
  for (const path of PATHS) {
    equal(posix.normalize(path), node.normalize(path), `normalize(${JSON.stringify(path)})`);
    equal(posix.isAbsolute(path), node.isAbsolute(path), `isAbsolute(${JSON.stringify(path)})`);
    equal(posix.dirname(path), node.dirname(path), `dirname(${JSON.stringify(path)})`);
    equal(posix.basename(path), node.basename(path), `basename(${JSON.stringify(path)})`);
    equal(posix.extname(path), node.extname(path), `extname(${JSON.stringify(path)})`);
  }
});

Deno.test("join, resolve and relative agree with node:path on pairs of the corpus", () => {
  for (const first of SOME) {
    for (const second of SOME) {
      const args = JSON.stringify([first, second]);
      equal(posix.join(first, second), node.join(first, second), `join(${args})`);
      equal(posix.resolve(first, second), node.resolve(first, second), `resolve(${args})`);
      equal(posix.relative(first, second), node.relative(first, second), `relative(${args})`);
    }
  }
  equal(posix.join(), node.join());
  equal(posix.resolve(), node.resolve());
  equal(posix.join("a", "", "b"), node.join("a", "", "b"));
  equal(posix.resolve("/x", "", "y"), node.resolve("/x", "", "y"));
});
