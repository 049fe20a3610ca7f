// The A2A JavaScript SDK's client (@a2a-js/sdk), resolved from an agent's card and driven line by
// line from a test: each line on stdin is one call, each line on stdout its outcome.
//
//   node a2a_client.mjs URL AGENT     (AGENT: the X-Taskfs-Agent a loopback caller names)
//
// Calls: {"op": "send", "text"|"data": ..., "taskId"?, "contextId"?, "returnImmediately"?},
// {"op": "stream", "data": ...} (every event until the stream ends), {"op": "get", "id"},
// {"op": "list"}, {"op": "cancel", "id"}. Outcomes: {"task": {id, contextId, state, history,
// artifacts}}, {"events": [...]}, {"tasks": [...]}, or {"thrown": {name, code, message}}.
import readline from 'node:readline';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';

const [url, agent] = process.argv.slice(2);
const fetchImpl = (input, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set('X-Taskfs-Agent', agent);
  return fetch(input, { ...init, headers });
};
const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] });
const client = await factory.createFromUrl(url);
const say = (doc) => process.stdout.write(JSON.stringify(doc) + '\n');

const shown = (task) => ({
  id: task.id,
  contextId: task.contextId,
  state: taskStateToJSON(task.status?.state),
  history: (task.history ?? []).map((m) => ({
    role: m.role === Role.ROLE_USER ? 'user' : 'agent',
    text: m.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join(''),
  })),
  artifacts: (task.artifacts ?? []).map((a) => a.name),
});

const message = (call) => ({
  messageId: randomUUID(),
  role: Role.ROLE_USER,
  taskId: call.taskId ?? '',
  contextId: call.contextId ?? '',
  parts: [
    call.data !== undefined
      ? { content: { $case: 'data', value: call.data }, metadata: undefined, filename: '', mediaType: '' }
      : { content: { $case: 'text', value: call.text }, metadata: undefined, filename: '', mediaType: '' },
  ],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

const request = (call) => ({
  tenant: '',
  message: message(call),
  configuration: {
    acceptedOutputModes: [],
    taskPushNotificationConfig: undefined,
    returnImmediately: Boolean(call.returnImmediately),
  },
  metadata: undefined,
});

async function act(call) {
  switch (call.op) {
    case 'send': {
      const result = await client.sendMessage(request(call));
      return { task: shown(result.task ?? result) };
    }
    case 'stream': {
      const events = [];
      for await (const event of client.sendMessageStream(request(call))) {
        const payload = event.payload ?? event;
        if (payload.$case === 'task') events.push({ task: shown(payload.value) });
        else if (payload.$case === 'statusUpdate')
          events.push({ status: taskStateToJSON(payload.value.status?.state) });
        else if (payload.$case === 'artifactUpdate') events.push({ artifact: payload.value.artifact?.name });
        else events.push({ other: payload.$case ?? 'unknown' });
      }
      return { events };
    }
    case 'get':
      return { task: shown(await client.getTask({ tenant: '', id: call.id })) };
    case 'list': {
      // A status must be named: left out, the SDK sends "UNRECOGNIZED", which is no state.
      const listed = await client.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '' });
      return { tasks: listed.tasks.map(shown) };
    }
    case 'cancel':
      return { task: shown(await client.cancelTask({ tenant: '', id: call.id, metadata: undefined })) };
    default:
      throw new Error(`unknown op ${call.op}`);
  }
}

say({ ready: true });
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  try {
    say(await act(JSON.parse(line)));
  } catch (error) {
    say({ thrown: { name: error?.name, code: error?.code, message: String(error?.message ?? error) } });
  }
}
