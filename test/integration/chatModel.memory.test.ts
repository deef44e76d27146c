// Time: about 3 s (four broken streams of 20 MB each on loopback).
/**
 * What the Chat Model keeps of an unknown outcome (found by an attack on issue 51): a sub-node's run never says it
 * ended, so the guard's bounds (64 MB of answers and details, shared/run/guardMemory.ts) never reach what it keeps for
 * the root's Retry On Fail. It kept the whole error, a broken stream's partialContent among it (up to 32 MB), for six
 * hours: four executions whose streams broke after 20 MB held 80 MiB. Now only the error's small details are kept.
 */
import { GenGatewayChatModel } from '../../nodes/GenGatewayChatModel/GenGatewayChatModel.node';
import { guardBytes } from '../../nodes/shared/run/guardMemory';
import { startScriptedServer } from '../support/scriptedServer';
import { chatModelSupplyContext } from '../support/supplyData';

const MiB = 1024 * 1024;
const delta = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content: 'a'.repeat(MiB) } }] })}\n\n`;

it('four executions whose streams broke after 20 MB each: the guard keeps a few KiB of them, not the text', async () => {
	const server = await startScriptedServer(async (_req, res) => {
		res.writeHead(200, { 'content-type': 'text/event-stream' });
		for (let i = 0; i < 20; i++) {
			if (!res.write(delta)) await new Promise((drained) => res.once('drain', drained));
		}
		// The stream breaks before [DONE]: paid, outcome unknown, kept for the root's retry.
		res.socket?.destroy();
	});
	const before = guardBytes();
	try {
		for (let n = 0; n < 4; n++) {
			const supply = chatModelSupplyContext({
				baseUrl: server.url,
				apiKey: 'sk-memory-test-1234567890',
				parameters: { model: { __rl: true, mode: 'id', value: 'm' }, options: {} },
			});
			const model = (await new GenGatewayChatModel().supplyData.call(supply.ctx, 0)).response as {
				stream(input: unknown): Promise<AsyncIterable<unknown>>;
			};
			const drain = async () => {
				for await (const piece of await model.stream(`hi ${n}`)) void piece;
			};
			await expect(drain()).rejects.toThrow(/broke|incomplete/);
		}
	} finally {
		await server.close();
	}
	expect(guardBytes() - before).toBeLessThan(64 * 1024);
});
