/**
 * Bypasses of Bash allow, deny and ask rules found by a security review: code that bash evaluates from a
 * variable's value, assignment statements changing what later commands run, and commands whose program is
 * computed or hidden behind a wrapper. Each row ran a command in a real run before the fix.
 */
import { equal, match } from "node:assert/strict";
import {
  allow,
  createScene,
  decideBash,
  deny,
  type Expected,
  policyFor,
  rule,
  table,
} from "./_policy_fixture.ts";

const READERS = allow("Bash(echo *)", "Bash(printf *)", "Bash(test *)", "Bash([ *)", "Bash(read *)");

Deno.test("an allow rule never allows a command in which bash evaluates a variable's value as code", async (t) => {
  await table(t, { rules: READERS }, [
    ["x='$(touch p)'; echo ${x@P}", "ask"],
    ["echo ${x@Q}", "ask"],
    ["x='a[$(touch p)]'; echo $((x))", "ask"],
    ["echo $((x + 1))", "ask"],
    ["echo $(( $x ))", "ask"],
    ["((x++)); echo done", "ask"],
    ["for ((i = 0; i < n; i++)); do echo $i; done", "ask"],
    ["printf -v 'a[$(touch p)]' x", "ask"],
    ["printf -va[1] x", "ask"],
    ['printf -v "$name" x', "ask"],
    ["test -v 'a[$(touch p)]'", "ask"],
    ["[ -v 'a[$(touch p)]' ]", "ask"],
    ["[[ -v a[$x] ]] && echo y", "ask"],
    ["[[ $x -eq 1 ]] && echo y", "ask"],
    ["echo ${!x}", "ask"],
    ["echo ${a[x]}", "ask"],
    ["echo ${a[$i]}", "ask"],
    ["echo ${x:y}", "ask"],
    ["echo ${x:1:n}", "ask"],
    ["echo ${x:-$((y))}", "ask"],
    ["read 'a[$(touch p)]'", "ask"],
    ["a[x]=1; echo ok", "ask"],
    ["echo $HOME", "allow"],
    ['echo "$x"', "allow"],
    ["echo ${x}", "allow"],
    ["echo ${#x} ${x:-none} ${x%.txt} ${x/a/b} ${a[0]} ${a[@]} ${!a[@]} ${!pre@}", "allow"],
    ["echo ${x:1:2} $((1 + 2)) $((0x10))", "allow"],
    ["x='$(touch p)'; echo $x", "allow"],
    ["printf '%s\\n' x", "allow"],
    ["printf -v out '%s' x", "allow"],
    ["test -v HOME", "allow"],
    ['[ -n "$x" ]', "allow"],
    ["read -r -p 'continue [y/n]? ' answer", "allow"],
  ]);
});

Deno.test("builtins that evaluate names or values are not allowed by a rule for the builtin", async (t) => {
  await table(t, {
    rules: allow(
      "Bash(declare *)",
      "Bash(typeset *)",
      "Bash(local *)",
      "Bash(export *)",
      "Bash(readonly *)",
      "Bash(let *)",
      "Bash(unset *)",
      "Bash(mapfile *)",
      "Bash(wait *)",
      "Bash(getopts *)",
      "Bash(hash *)",
    ),
  }, [
    ["declare 'a[$(touch p)]=1'", "ask"],
    ["declare -i n; n='a[$(touch p)]'", "ask"],
    ["local -n ref=x", "ask"],
    ['export "$name=1"', "ask"],
    ["let x=1", "ask"],
    ["unset 'a[$(touch p)]'", "ask"],
    ["mapfile -C 'touch p' -c 1 lines", "ask"],
    ["wait -p 'a[$(touch p)]' -n", "ask"],
    ["getopts ab 'a[$(touch p)]'", "ask"],
    ["hash -p ./evil npm", "ask"],
    ["declare -a list", "allow"],
    ["export CI=1", "allow"],
    ["unset CI", "allow"],
    ["mapfile -t lines", "allow"],
  ]);
});

Deno.test("an assignment statement of a variable that changes what later commands run is never allowed", async (t) => {
  await table(t, {
    rules: allow("Bash(npm test *)", "Bash(git status:*)", "Bash(export *)", "Bash(declare *)"),
  }, [
    ["PATH=.:$PATH; npm test", "ask"],
    ["HOME=$PWD; git status", "ask"],
    ["HOME=$PWD git status", "ask"],
    ["export PATH=.:$PATH; npm test", "ask"],
    ["export HOME=/tmp/x && git status", "ask"],
    ["declare -x NODE_OPTIONS=--require=./x.js; npm test", "ask"],
    ["GIT_DIR=/tmp/evil; git status", "ask"],
    ["XDG_CONFIG_HOME=.; git status", "ask"],
    ["for PATH in . ; do npm test; done", "ask"],
    ["CI=1; npm test", "allow"],
    ["export CI=1; npm test", "allow"],
  ]);
  await t.step("the reason names the variable", async () => {
    await using scene = await createScene();
    const policy = policyFor(scene, { rules: allow("Bash(npm test *)") });
    const decision = await decideBash(policy, scene, "PATH=.:$PATH; npm test");
    match(decision.reason ?? "", /cannot be allowed by a rule \("PATH=\.:\$PATH": it sets PATH/);
  });
  await t.step("in -p without an approver (dontAsk) it is denied", async () => {
    await using scene = await createScene();
    const policy = policyFor(scene, { mode: "dontAsk", rules: allow("Bash(npm test *)") });
    equal((await decideBash(policy, scene, "PATH=.:$PATH; npm test")).behavior, "deny");
  });
});

Deno.test("a command whose program is computed asks when a deny or ask rule names a command", async (t) => {
  const cases: [string, Expected][] = [
    ["{rm,-f,x}", "ask"],
    ["$(echo rm) -f x", "ask"],
    ["r${u}m x", "ask"],
    ["x=rm; $x -f y", "ask"],
    ["/bin/r? x", "ask"],
    ["sudo $cmd x", "ask"],
    ['eval "$cmd"', "ask"],
    ['bash -c "$cmd"', "ask"],
    ["awk 'BEGIN{system(\"rm x\")}'", "ask"],
    ['trap "$cleanup" EXIT', "ask"],
    ["rm x", "deny"],
    ["ls -la", "allow"],
    ["awk '{print $1}' f", "allow"],
  ];
  await table(t, { rules: [...allow("Bash"), ...deny("Bash(rm *)")] }, cases);
  await t.step("an ask rule fails closed the same way", async () => {
    await using scene = await createScene();
    const policy = policyFor(scene, { rules: [...allow("Bash"), rule("Bash(git push *)", "ask")] });
    const decision = await decideBash(policy, scene, "$GIT push");
    equal(decision.behavior, "ask");
    match(decision.reason ?? "", /"\$GIT push".*known only when it runs.*ask rule Bash\(git push \*\)/);
  });
  await t.step("without deny or ask rules, Bash alone still allows it", async () => {
    await using scene = await createScene();
    equal((await decideBash(policyFor(scene, { rules: allow("Bash") }), scene, "$x -f y")).behavior, "allow");
  });
});

Deno.test("deny rules look through more wrappers and the commands they run from strings", async (t) => {
  await table(t, { rules: [...allow("Bash"), ...deny("Bash(rm *)")] }, [
    ["setsid rm x", "deny"],
    ["find . -name '*.o' -exec rm {} \\;", "deny"],
    ["find . -execdir rm -f {} +", "deny"],
    ["find . -ok rm {} ';'", "deny"],
    ["ionice -c 3 rm x", "deny"],
    ["chrt 0 rm x", "deny"],
    ["chrt -T 5 0 rm x", "deny"],
    ["flock /tmp/lock rm x", "deny"],
    ["flock -c 'rm x' /tmp/lock", "deny"],
    ["busybox rm x", "deny"],
    ["strace -o /dev/null rm x", "deny"],
    ["watch rm x", "deny"],
    ["watch -n 5 'ls; rm x'", "deny"],
    ["script -qc 'rm x' /dev/null", "deny"],
    ["script -c 'rm x'", "deny"],
    ["nohup rm x", "deny"],
    ["builtin command rm x", "deny"],
    ["trap 'rm x' EXIT", "deny"],
    ["xargs -I{} sh -c 'rm {}'", "deny"],
    ["find . -name '*.o' -print", "allow"],
    ["trap - EXIT", "allow"],
  ]);
});

Deno.test("allow rules see the commands find -exec runs, and sudo-like wrappers stay unallowed", async (t) => {
  await table(t, { rules: allow("Bash(find *)", "Bash(npm test *)", "Bash(ls *)") }, [
    ["find . -exec rm {} \\;", "ask"],
    ["find . -exec ls {} \\;", "allow"],
    ["find . -name x", "allow"],
    ["setsid npm test", "allow"],
    ["strace npm test", "ask"],
    ["watch 'npm test; rm x'", "ask"],
  ]);
});

Deno.test("git rules match the subcommand after git's global options", async (t) => {
  await table(t, { rules: [...allow("Bash(git *)"), ...deny("Bash(git push *)")] }, [
    ["git -C . push", "deny"],
    ["git --no-pager push", "deny"],
    ["git -c a.b=c push", "deny"],
    ["git --git-dir=.git push", "deny"],
    ["git --git-dir .git --work-tree . push origin", "deny"],
    ["git -P --namespace=x --bare push", "deny"],
    ["git --exec-path=/tmp push", "deny"],
    ["/usr/bin/git -C . push", "deny"],
    ["sudo git -C . push", "deny"],
    ["git -C . status", "allow"],
  ]);
  await table(t, { rules: allow("Bash(git status:*)") }, [
    ["git -C sub status", "allow"],
    ["git --no-pager -C sub status --short", "allow"],
    ["git -p status", "allow"],
    ["git -c core.fsmonitor='touch p' status", "ask"],
    ["git --config-env=core.pager=X status", "ask"],
    ["git --exec-path=. status", "ask"],
    ["git -C sub push", "ask"],
  ]);
});

Deno.test("an argument the shell computes asks where a deny or ask rule may match what it becomes", async (t) => {
  await table(t, {
    rules: [...allow("Bash(git *)", "Bash(rm *)"), ...deny("Bash(git push *)", "Bash(rm -rf /)")],
  }, [
    ["git $(echo push) origin", "ask"],
    ['git "$sub" origin', "ask"],
    ["sub=push; git $sub", "ask"],
    ["git `echo push`", "ask"],
    ["git -C . $(echo push)", "ask"],
    ['rm -rf "$dir"', "ask"],
    ["git push origin", "deny"],
    // Words before the computed one that no denied command begins with: the rule cannot match.
    ['git commit -m "$message"', "allow"],
    ['git log "$range"', "allow"],
    ['rm -f "$file"', "allow"],
  ]);
  await t.step("an ask rule fails closed the same way, and says which argument", async () => {
    await using scene = await createScene();
    const policy = policyFor(scene, { rules: [...allow("Bash"), rule("Bash(git push *)", "ask")] });
    const decision = await decideBash(policy, scene, "git $(printf push) origin");
    equal(decision.behavior, "ask");
    match(
      decision.reason ?? "",
      /its argument "\$\(printf push\)" is known only when it runs.*ask rule Bash\(git push \*\)/,
    );
  });
});
