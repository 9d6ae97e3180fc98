/**
 * The deny and ask rules a search applies to each file it would list or search (`ToolCallContext.deniedReads`), in
 * the worker: a file is left out when a rule's path pattern matches it as walked or as it really is, exactly
 * as the policy matches a direct call's path as named and as real (`restrictedPaths` in
 * src/permissions/_evaluation.ts). So `ReadFile(.env)` leaves out `.env`, `sub/.env` and a symlink `notenv`
 * that leads to `.env`, and a search of the workspace cannot show what a ReadFile of each would be denied.
 *
 * The patterns are compiled here from the rules' text by the policy's own compiler (`compilePathPattern`),
 * so both agree on what `.env`, `**\/.env` and `secrets/**` cover.
 *
 * @module
 */
import {
  compilePathPattern,
  matchesPath,
  type PathPattern,
  type PatternBases,
} from "../permissions/path_pattern.ts";
import type { DeniedReads } from "./tool.ts";

/** The deny rules of one call, compiled. */
export class DeniedFiles {
  #rules: { pattern: PathPattern; covering: CoveringRule }[];
  #bases: PatternBases;

  private constructor(rules: { pattern: PathPattern; covering: CoveringRule }[], bases: PatternBases) {
    this.#rules = rules;
    this.#bases = bases;
  }

  /**
   * The compiled rules of a call's context, or null without any. Throws for a pattern the policy would have
   * refused: the search must not run without a rule it was given.
   */
  static from(denied: DeniedReads | undefined, workspace: string): DeniedFiles | null {
    if (denied === undefined || denied.rules.length === 0) return null;
    const rules = denied.rules.map(({ rule, origin, specifier, asks }) => {
      const compiled = compilePathPattern(specifier);
      if (!compiled.ok) throw new TypeError(`Cannot use rule "${rule}": ${compiled.error}`);
      return { pattern: compiled.value, covering: { named: `${rule} from ${origin}`, asks: asks === true } };
    });
    return new DeniedFiles(rules, { workspace, home: denied.home });
  }

  /**
   * The rule that denies reading a file or asks first, found at `path` and really at `realPath` (both
   * absolute), or null when none does. The policy puts deny rules first; the first rule that covers the
   * file is the one named, either way the file is left out.
   */
  denying(path: string, realPath: string): CoveringRule | null {
    for (const { pattern, covering } of this.#rules) {
      if (matchesPath(pattern, path, this.#bases)) return covering;
      if (realPath !== path && matchesPath(pattern, realPath, this.#bases)) return covering;
    }
    return null;
  }
}

/** A rule that leaves a file out of searches: "RULE from ORIGIN", and whether it is an ask rule. */
export interface CoveringRule {
  named: string;
  asks: boolean;
}
