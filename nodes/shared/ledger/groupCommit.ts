/**
 * Group commit: callers that write at the same time share one write. The first caller's write starts at once; those
 * that come while it runs wait and go together in the next one; each caller gets its own answer. A ledger write is a
 * sub-workflow in n8n (a few database statements and an execution row), so the items of a run that submit together
 * (Max Concurrency) pay for one, not one each.
 */
export class GroupCommit<In, Out> {
	private waiting: Array<{ input: In; resolve: (out: Out) => void; reject: (error: unknown) => void }> = [];
	private running = false;

	/** `flush` answers one output per input, in input order. */
	constructor(private readonly flush: (inputs: In[]) => Promise<Out[]>) {}

	/** Inputs that always go in one write together (and with whatever else waits then); their outputs in order. */
	async runAll(inputs: In[]): Promise<Out[]> {
		const answers = inputs.map(
			(input) => new Promise<Out>((resolve, reject) => this.waiting.push({ input, resolve, reject })),
		);
		if (!this.running) void this.drain();
		return await Promise.all(answers);
	}

	private async drain(): Promise<void> {
		this.running = true;
		while (this.waiting.length > 0) {
			const group = this.waiting;
			this.waiting = [];
			try {
				const outputs = await this.flush(group.map((entry) => entry.input));
				group.forEach((entry, index) => entry.resolve(outputs[index]));
			} catch (error) {
				for (const entry of group) entry.reject(error);
			}
		}
		this.running = false;
	}
}
