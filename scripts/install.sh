#!/bin/sh
# Installs the mewcode binary for this machine from a mewcode release, into ~/.local/bin:
#
#   curl -fsSL <release download URL>/install.sh | sh
#
# It picks the binary for this OS and CPU (uname), downloads it and SHA256SUMS from the release (curl, else
# wget), refuses it unless its SHA-256 is the one SHA256SUMS lists (sha256sum, else shasum -a 256), checks
# that it runs, and renames it into place, so a half-written or unverified file is never ~/.local/bin/mewcode.
#
# Settings (environment):
#   MEWCODE_RELEASE_URL    the release to install from: the URL (https:// or file://) of the directory that
#                          holds the binaries and SHA256SUMS. A release's own install.sh names its release.
#   MEWCODE_INSTALL_OS     instead of `uname -s` (Linux, Darwin), and
#   MEWCODE_INSTALL_ARCH   instead of `uname -m` (x86_64, aarch64, arm64): another build for this machine (the
#                          x86_64 one on an arm64 Mac, under Rosetta); a binary that does not run here is refused.
#
# Everything it does is in `main`, called on the last line: sh runs a script piped to it as it arrives, so a
# download cut short must leave nothing that runs (a `set -eu` cut to `set` would print the environment).

# Filled in by `deno task release --tag T --repository OWNER/NAME`; empty in a checkout.
DEFAULT_RELEASE_URL=""

fail() {
  printf 'mewcode install: %s\n' "$*" >&2
  exit 1
}

# Downloads URL $1 to file $2.
download() {
  case "$downloader:$1" in
    # --proto: never follow a redirect to plain http. A download that stalls (under 1 KB/s for a minute)
    # is given up rather than waited for without end.
    curl:*) curl --fail --silent --show-error --location --proto '=https,file' --connect-timeout 30 \
      --speed-limit 1024 --speed-time 60 --output "$2" "$1" || fail "cannot download $1" ;;
    # wget cannot read file:// URLs. file:///path and file://localhost/path name the same file; the path must
    # be absolute (a relative one would be read from the current folder).
    wget:file://*)
      path="${1#file://}"
      path="${path#localhost}"
      case "$path" in /*) ;; *) fail "cannot download $1: a file:// URL names an absolute path (file:///path)" ;; esac
      cp "$path" "$2" || fail "cannot download $1"
      ;;
    wget:*)
      # wget follows a redirect to plain http whatever it is told (--https-only is for recursive
      # downloads), so its log says where the file came from, and anything not over https is refused.
      LC_ALL=C wget --no-verbose --tries=3 --timeout=60 --output-file="$work/wget.log" --output-document="$2" "$1" ||
        fail "cannot download $1: $(sed -n '$p' "$work/wget.log" 2>/dev/null)"
      source="$(sed -n 's/^.* URL: *\([^ ]*\) .*$/\1/p' "$work/wget.log")"
      case "$source" in
        https://*) ;;
        *) fail "refusing $1: it was sent from ${source:-an address wget did not report}, not over https; nothing was installed" ;;
      esac
      ;;
  esac
}

main() {
  set -eu

  release_url="${MEWCODE_RELEASE_URL:-$DEFAULT_RELEASE_URL}"
  [ -n "$release_url" ] ||
    fail "no release to install from: set MEWCODE_RELEASE_URL to a release's download URL (the directory with SHA256SUMS)"
  release_url="${release_url%/}"
  case "$release_url" in
    https://* | file://*) ;;
    *) fail "cannot download from \"$release_url\": use an https:// (or file://) URL" ;;
  esac
  [ -n "${HOME:-}" ] || fail "HOME is not set: cannot find ~/.local/bin"
  case "$HOME" in /*) ;; *) fail "HOME is \"$HOME\", not an absolute path: cannot find ~/.local/bin" ;; esac

  os="${MEWCODE_INSTALL_OS:-$(uname -s)}"
  arch="${MEWCODE_INSTALL_ARCH:-$(uname -m)}"
  # A shell under Rosetta on Apple silicon reports x86_64: the native binary is the one to run.
  if [ -z "${MEWCODE_INSTALL_ARCH:-}" ] && [ "$os" = Darwin ] && [ "$arch" = x86_64 ] &&
    [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
    arch=arm64
  fi
  case "$os/$arch" in
    Linux/x86_64 | Linux/amd64) target="x86_64-unknown-linux-gnu" ;;
    Linux/aarch64 | Linux/arm64) target="aarch64-unknown-linux-gnu" ;;
    Darwin/x86_64) target="x86_64-apple-darwin" ;;
    Darwin/arm64 | Darwin/aarch64) target="aarch64-apple-darwin" ;;
    MINGW* | MSYS* | CYGWIN* | Windows*)
      fail "this script installs on Linux and macOS: on Windows, download mewcode-x86_64-pc-windows-msvc.exe from $release_url"
      ;;
    *)
      fail "no mewcode binary for $os $arch: mewcode runs where Deno does, on Linux and macOS (x86_64 and arm64) and Windows (x86_64)"
      ;;
  esac
  file="mewcode-$target"

  # The tools, chosen before anything is downloaded.
  if command -v curl >/dev/null 2>&1; then
    downloader=curl
  elif command -v wget >/dev/null 2>&1; then
    downloader=wget
  else
    fail "cannot download: install curl or wget"
  fi
  if command -v sha256sum >/dev/null 2>&1; then
    hasher="sha256sum"
  elif command -v shasum >/dev/null 2>&1; then
    hasher="shasum -a 256"
  else
    fail "cannot verify a download: install sha256sum (coreutils) or shasum"
  fi

  bin_dir="$HOME/.local/bin"
  [ ! -e "$bin_dir" ] || [ -d "$bin_dir" ] ||
    fail "$bin_dir is not a folder: move it away (mewcode installs into it), then run the installer again"
  # mv would put the binary inside a folder (or a link to one) of that name, and report nothing wrong.
  [ ! -d "$bin_dir/mewcode" ] ||
    fail "$bin_dir/mewcode is a folder (or a link to one): move it away, then run the installer again; nothing was installed"
  work="$(mktemp -d)"
  staged=""
  trap 'rm -rf "$work"; [ -z "$staged" ] || rm -f "$staged"' EXIT
  # A hang-up or a closed pipe (the output piped to `head`) ends the run the same way, leaving nothing behind.
  trap 'exit 130' INT TERM HUP PIPE

  download "$release_url/SHA256SUMS" "$work/SHA256SUMS"
  download "$release_url/$file" "$work/$file"
  expected="$(awk -v name="$file" '$2 == name || $2 == "*" name { print $1; exit }' "$work/SHA256SUMS")"
  [ -n "$expected" ] || fail "SHA256SUMS of $release_url lists no $file; nothing was installed"
  actual="$($hasher "$work/$file" | cut -d' ' -f1)"
  [ "$actual" = "$expected" ] ||
    fail "checksum mismatch for $file: SHA256SUMS lists $expected but the download is $actual; nothing was installed"

  # Staged next to its final path, so the rename is atomic: a running mewcode keeps its old file.
  mkdir -p "$bin_dir"
  # A new name (mktemp creates it), never a predictable one: cp would follow a symlink put there first.
  staged="$(mktemp "$bin_dir/.mewcode.install.XXXXXX")" || fail "cannot write to $bin_dir"
  cp "$work/$file" "$staged"
  chmod 755 "$staged"
  version="$("$staged" --version 2>/dev/null)" ||
    fail "the downloaded $file does not run on this machine; nothing was installed"
  mv -f "$staged" "$bin_dir/mewcode"
  staged=""

  printf 'Installed %s to %s\n' "$version" "$bin_dir/mewcode"
  case ":${PATH:-}:" in
    *":$bin_dir:"* | *":$bin_dir/:"*) ;;
    *)
      printf '%s is not on your PATH: add this line to your shell profile (~/.profile, ~/.bashrc or ~/.zshrc):\n' "$bin_dir"
      # shellcheck disable=SC2016 # the line to add, printed as written
      printf '  export PATH="$HOME/.local/bin:$PATH"\n'
      printf 'or for fish, run once: fish_add_path ~/.local/bin\n'
      ;;
  esac
  printf 'Next: mewcode doctor checks the set-up; mewcode completions bash|zsh|fish prints shell completions\n'
}

# In braces: sh runs nothing of a compound command it has not read to its end, and a call cut to `main`
# would run it with the arguments cut off.
{ main "$@"; }
