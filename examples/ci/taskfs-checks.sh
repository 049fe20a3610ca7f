#!/usr/bin/env bash
# Run the acceptance checks a taskfs ledger waits for, once, and push the signed evidence back.
# For any CI: run it in the CI's own throwaway clone of the repository (it resets that clone to
# the remote branch), after a push that carries a `result` message or a check request
# (`taskfs check ID --request`). GitHub Actions: see taskfs-checks.yml beside this file.
#
# It runs `taskfs watch --once` under the operator's runner policy (only the commands the policy
# allows are run; a passing check completes its task only where the policy says `complete: true`,
# otherwise its holder completes it), signing the evidence with the runner key
# from the CI's secrets, then pushes. The remote branch is the arbiter: a push is only ever a
# fast-forward, so when another job pushed first this job starts again from that job's result,
# where the requests it answered are answered (an answered request is never run twice). Jobs
# that answer different tasks touch different task folders; a rerun with nothing pending changes
# nothing and pushes nothing.
#
# Environment:
#   TASKFS_RUNNER_KEY    the runner key's private part (PEM text), from the CI's secrets: the
#                        key `taskfs keys new --runner NAME` made; its .pub is committed
#   TASKFS_RUNNER        that key's name (default: ci)
#   TASKFS_POLICY_TEXT   the runner policy (YAML, see README "The watcher"), from the CI's secrets
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

for attempt in $(seq 1 "$attempts"); do
  git fetch --quiet "$remote" "$branch"
  git checkout --quiet -B "$branch" FETCH_HEAD
  git reset --quiet --hard FETCH_HEAD
  base=$(git rev-parse HEAD)
  taskfs watch --once
  if [ "$(git rev-parse HEAD)" = "$base" ]; then
    echo "taskfs-checks: nothing to push"
    exit 0
  fi
  if git push --quiet "$remote" "HEAD:refs/heads/$branch"; then
    echo "taskfs-checks: pushed $(git rev-list --count "$base..HEAD") commit(s) of evidence"
    exit 0
  fi
  echo "taskfs-checks: another job pushed first (attempt $attempt); starting again from its result" >&2
  sleep "$((RANDOM % 3))"
done
echo "taskfs-checks: gave up after $attempts attempts" >&2
exit 1
