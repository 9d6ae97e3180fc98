/**
 * The user's own git, as the e2e tests run it after a session: outside any sandbox, with no global or system
 * configuration.
 *
 * @module
 */

/** Runs `/usr/bin/git ...args` in `root`; returns its standard output and error, one after the other. */
export async function userGit(root: string, ...args: string[]): Promise<string> {
  const output = await new Deno.Command("/usr/bin/git", {
    args: ["-c", "user.name=User", "-c", "user.email=user@example.com", ...args],
    cwd: root,
    env: { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
}
