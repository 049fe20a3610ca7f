#!/usr/bin/env bash
# Run the acceptance checks a taskfs ledger waits for, once, and push the signed evidence back.
# For any CI: run it in the CI's own throwaway clone of the repository (it resets that clone to
# the remote branch), after a push that carries a `result` message or a check request
# (`taskfs check ID --request`), with taskfs, bubblewrap and the project's own test
# dependencies installed (the checks run the project's tests). GitHub Actions: see
# taskfs-checks.yml beside this file.
#
# It runs `taskfs watch --once` under the operator's runner policy (only the commands the policy
# allows are run; a passing check completes its task only where the policy says `complete: true`,
# in a commit the watcher makes on the holder's behalf; otherwise the holder completes it),
# signing the evidence with the runner key from the CI's secrets, then pushes, and says what it
# pushed: evidence, completions, and refusals (a request whose command the policy does not
# allow is answered once with a message to its sender, and runs on a later push once the policy
# allows it). The remote branch is the arbiter: a push is only ever a fast-forward, so when
# another job pushed first this job starts again from that job's result, where the requests it
# answered are answered (an answered request is never run twice). A push the remote refuses for
# any other reason (a protected branch, a hook) stops the job with git's reason. Jobs that
# answer different tasks touch different task folders; a rerun with nothing pending changes
# nothing and pushes nothing.
#
# Environment:
#   TASKFS_RUNNER_KEY    the runner key's private part (PEM text), from the CI's secrets: the
#                        key `taskfs keys new --runner NAME` made; its .pub is committed
#   TASKFS_RUNNER        that key's name (default: ci)
#   TASKFS_POLICY_TEXT   the runner policy (YAML, see docs/watcher.md), from the CI's secrets
#                        or variables; or TASKFS_POLICY naming a policy file outside the clone
#   TASKFS_CI_REMOTE     the remote to push to (default: origin)
#   TASKFS_CI_BRANCH     the branch (default: the one checked out, else GITHUB_REF_NAME)
#   TASKFS_CI_ATTEMPTS   how many times to start again when another job pushed first (default 5)
set -euo pipefail

remote=${TASKFS_CI_REMOTE:-origin}
branch=${TASKFS_CI_BRANCH:-$(git symbolic-ref --quiet --short HEAD || echo "${GITHUB_REF_NAME:?name the branch in TASKFS_CI_BRANCH}")}
attempts=${TASKFS_CI_ATTEMPTS:-5}

private=$(mktemp -d)
trap 'rm -rf "$private"' EXIT
chmod 700 "$private"
# The runner key and the policy live outside the clone, where no task's files can reach them.
export TASKFS_KEY_DIR="$private/keys"
export TASKFS_RUNNER=${TASKFS_RUNNER:-ci}
mkdir -m 700 "$TASKFS_KEY_DIR"
if [ -n "${TASKFS_RUNNER_KEY:-}" ]; then
  (umask 077 && printf '%s\n' "$TASKFS_RUNNER_KEY" >"$TASKFS_KEY_DIR/runner-$TASKFS_RUNNER.pem")
else
  echo "taskfs-checks: no TASKFS_RUNNER_KEY: the evidence will be unsigned" >&2
  unset TASKFS_RUNNER
fi
if [ -n "${TASKFS_POLICY_TEXT:-}" ]; then
  printf '%s\n' "$TASKFS_POLICY_TEXT" >"$private/policy.yaml"
  export TASKFS_POLICY="$private/policy.yaml"
fi

say() {
  echo "taskfs-checks: $*"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then echo "taskfs-checks: $*" >>"$GITHUB_STEP_SUMMARY"; fi
}

# "1 refusal", "2 refusals"; evidence is a mass noun.
count() { if [ "$1" = 1 ] || [ "$3" = "" ]; then echo "$1 $2"; else echo "$1 $3"; fi; }

# What the commits base..HEAD add to the ledger, in words: each kind of file taskfs writes.
pushed() {
  local added evidence completed refused
  added=$(git diff --name-only --no-renames --diff-filter=A "$1" HEAD)
  evidence=$(grep -c '/evidence/[^/]*\.yaml$' <<<"$added" || true)
  completed=$(grep -c '/status/[0-9]*-completed-[^/]*\.yaml$' <<<"$added" || true)
  # The watcher's only message: why it did not run a check (the policy does not allow it).
  refused=$(grep -c '/messages/[^/]*\.yaml$' <<<"$added" || true)
  echo "$(count "$refused" refusal refusals), $(count "$evidence" evidence ""), $(count "$completed" completion completions)"
}

for attempt in $(seq 1 "$attempts"); do
  git fetch --quiet "$remote" "$branch"
  git checkout --quiet -B "$branch" FETCH_HEAD
  git reset --quiet --hard FETCH_HEAD
  base=$(git rev-parse HEAD)
  taskfs watch --once
  if [ "$(git rev-parse HEAD)" = "$base" ]; then
    say "nothing to push"
    exit 0
  fi
  commits=$(git rev-list --count "$base..HEAD")
  what=$(pushed "$base")
  if answer=$(git push --porcelain "$remote" "HEAD:refs/heads/$branch" 2>&1); then
    say "pushed $(count "$commits" commit commits): $what"
    exit 0
  fi
  # A race: the branch moved under us (git refused a push that is not a fast-forward, or the
  # remote lost the race for the ref's lock to another job's push).
  moved=$(git ls-remote --quiet "$remote" "refs/heads/$branch" | cut -f1 || true)
  if [ "$moved" != "$base" ] || grep -Eq '^!.*\[rejected\] \((fetch first|non-fast-forward)\)' <<<"$answer"; then
    echo "taskfs-checks: another job pushed first (attempt $attempt); starting again from its result" >&2
    sleep "$((RANDOM % 3))"
    continue
  fi
  # Anything else (a protected branch, a hook, no right to push) will not pass by trying again.
  echo "taskfs-checks: the remote refused the push ($what not pushed); git said:" >&2
  grep -v '^Done$' <<<"$answer" >&2 || true
  exit 1
done
echo "taskfs-checks: gave up after $attempts attempts" >&2
exit 1
