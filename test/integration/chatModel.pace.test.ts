// One pace per credential for every node (issue 31): a 429 the Gen Gateway Chat Model gets slows the Video node on
// the same credential, and a 429 the Video node gets slows the Chat Model; a node on another credential goes at once.
// Since issue 39 the refused request waits its own Retry-After and the others on its credential one turn at the new
// pace (about 1 s: nothing was accepted before the 429, counted as 1 a second, held at 97% of it).
// The Chat Model runs on n8n-core's real supply context, the Video node (Get Status) on the n8n-core harness, each in
// its own execution, against one loopback server of the test's own that records when each request arrived.
// Time: about 20 s (two Retry-After waits of 4 s, and the harness).
import type { INodeType, ISupplyDataFunctions } from 'n8n-workflow';

import { GenGatewayChatModel } from '../../nodes/GenGatewayChatModel/GenGatewayChatModel.node';
import { pacerOf } from '../../nodes/shared/transport/pacer';
import type { MockClient } from '../mock/process';
import { sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedServer } from '../support/scriptedServer';
import { chatModelSupplyContext } from '../support/supplyData';
import { runVideo } from '../support/videoRun';

jest.setTimeout(60_000);

const API_KEY = 'sk-pace-shared-4e1f0a';
const COMPLETIONS = '/v1/chat/completions';
const STATUS = '/v1/tasks/task_pace';
const RETRY_AFTER_S = 4;
const GET_STATUS = { operation: 'getStatus', taskId: 'task_pace' };
const run = `${process.pid}-${Date.now()}`;
const credential = (name: string) => ({ id: `pace-${name}-${run}`, name: `Gen Gateway ${name}` });

interface Model {
	invoke(input: unknown): Promise<{ text: string }>;
}

async function chatModel(url: string, executionId: string, cred: { id: string; name: string }): Promise<Model> {
	const { ctx } = chatModelSupplyContext({
		baseUrl: url,
		apiKey: API_KEY,
		parameters: { model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' }, options: {} },
		executionId: `${executionId}-${run}`,
		credential: cred,
	});
	const node: INodeType = new GenGatewayChatModel();
	return (await node.supplyData!.call(ctx as ISupplyDataFunctions, 0)).response as Model;
}

const at = (server: { url: string }) => ({ url: server.url, apiKey: API_KEY }) as unknown as MockClient;

/** Arrival times (epoch ms) of each request, by "METHOD path" and credential-independent order. */
interface Arrival {
	line: string;
	at: number;
}

/** A service whose first POST and first status GET (when asked) answer 429 with a Retry-After. */
async function service(limit: { post?: boolean; get?: boolean }): Promise<{ server: ScriptedServer; arrivals: Arrival[] }> {
	const arrivals: Arrival[] = [];
	let posts = 0;
	let gets = 0;
	const server = await startScriptedServer((req, res) => {
		const line = `${req.method} ${req.path.split('?')[0]}`;
		arrivals.push({ line, at: Date.now() });
		if (req.method === 'POST') {
			if (limit.post && posts++ === 0) {
				return sendJson(res, 429, { error: { message: 'Too many requests' } }, { 'retry-after': String(RETRY_AFTER_S) });
			}
			return sendJson(res, 200, {
				id: 'c',
				object: 'chat.completion',
				choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hi' } }],
			});
		}
		if (limit.get && gets++ === 0) {
			return sendJson(res, 429, { error: { message: 'Too many requests' } }, { 'retry-after': String(RETRY_AFTER_S) });
		}
		sendJson(res, 200, { task_id: 'task_pace', status: 'in_progress', progress: '10%' });
	});
	return { server, arrivals };
}

async function until(condition: () => boolean): Promise<void> {
	while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

const arrivalsOf = (arrivals: Arrival[], line: string) => arrivals.filter((a) => a.line === line).map((a) => a.at);

/** One turn at the pace a 429 sets when nothing was accepted before it (0.97 requests/s), less timer slack. */
const ONE_TURN_MS = 1000 / 0.97 - 50;
/** Whether a credential is paced now (a 429 on it was learnt), as any execution on it sees it. */
const paced = (cred: { id: string }) => Number.isFinite(pacerOf(`probe-${run}`, cred.id).rate);

let open: ScriptedServer | undefined;
afterEach(async () => {
	await open?.close();
	open = undefined;
});

it('a 429 the Chat Model gets slows the Video node on the same credential; another credential goes at once', async () => {
	const { server, arrivals } = await service({ post: true });
	open = server;
	const shared = credential('shared-a');
	// Warm-up: the harness loads once (its first run is slow), on a credential of its own.
	expect((await runVideo(at(server), GET_STATUS, { credentials: credential('warm-a') })).error).toBeUndefined();

	const answered = (await chatModel(server.url, 'chat-a', shared)).invoke('Hello');
	await until(() => arrivalsOf(arrivals, `POST ${COMPLETIONS}`).length === 1);
	const limitedAt = arrivalsOf(arrivals, `POST ${COMPLETIONS}`)[0];
	await until(() => paced(shared));

	// The same credential, another execution: its status GET waits one turn at the pace the 429 set.
	const same = await runVideo(at(server), GET_STATUS, { credentials: shared });
	expect(same.error).toBeUndefined();
	const sameAt = arrivalsOf(arrivals, `GET ${STATUS}`)[1];
	expect(sameAt - limitedAt).toBeGreaterThanOrEqual(ONE_TURN_MS);

	// Another credential: not paced, its status GET goes at once.
	expect(paced(credential('other-a'))).toBe(false);
	const other = await runVideo(at(server), GET_STATUS, { credentials: credential('other-a') });
	expect(other.error).toBeUndefined();

	// The refused request itself waited its Retry-After, then was answered.
	expect((await answered).text).toBe('Hi');
	const posts = arrivalsOf(arrivals, `POST ${COMPLETIONS}`);
	expect(posts).toHaveLength(2);
	expect(posts[1] - limitedAt).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1000 - 100);
});

it('a 429 the Video node gets slows the Chat Model on the same credential; another credential goes at once', async () => {
	const { server, arrivals } = await service({ get: true });
	open = server;
	const shared = credential('shared-b');
	const video = runVideo(at(server), GET_STATUS, { credentials: shared });
	await until(() => arrivalsOf(arrivals, `GET ${STATUS}`).length === 1);
	const limitedAt = arrivalsOf(arrivals, `GET ${STATUS}`)[0];
	// The server noted the GET before its 429 went out: give the Video node a moment to read it.
	await new Promise((resolve) => setTimeout(resolve, 300));

	expect(paced(shared)).toBe(true);
	expect(paced(credential('other-b'))).toBe(false);

	// Both Chat Models ask now: the one on the same credential waits one turn at the new pace, the other goes at once.
	const [sameAnswer, otherAnswer] = [
		(await chatModel(server.url, 'chat-b-same', shared)).invoke('Hello'),
		(await chatModel(server.url, 'chat-b-other', credential('other-b'))).invoke('Hello'),
	];
	expect((await otherAnswer).text).toBe('Hi');
	expect((await sameAnswer).text).toBe('Hi');
	const posts = arrivalsOf(arrivals, `POST ${COMPLETIONS}`);
	expect(posts).toHaveLength(2);
	const [first, second] = [...posts].sort((a, b) => a - b);
	expect(first - limitedAt).toBeLessThan(RETRY_AFTER_S * 1000 - 1000);
	expect(second - limitedAt).toBeGreaterThanOrEqual(ONE_TURN_MS);
	// The refused status GET itself waited its Retry-After.
	expect((await video).error).toBeUndefined();
	expect(arrivalsOf(arrivals, `GET ${STATUS}`)[1] - limitedAt).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1000 - 100);
});
