import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { Operation } from '../../shared/run/router';
import { guardScope, runIndexOf, submitOnce } from '../../shared/run/submissionGuard';
import type { GuardScope } from '../../shared/run/submissionGuard';
import type { Lane } from '../../shared/transport/lane';
import { completeTask } from '../task/outcome';
import { modelFieldProperties, modelProperty } from '../model/fields';
import { inputSource, readBinarySources, readVideoParameters } from '../model/parameters';
import type { InputSource } from '../model/parameters';
import { InvalidVideoRequest } from '../model/fieldParsers';
import { BinarySourceProblem, checkBinarySources } from '../media/binarySources';
import { checkReachable, issueSignedUrls } from '../media/signedUrls';
import type { IssuedUrl } from '../media/signedUrls';
import { videoRequestBody } from '../model/requestBody';
import type { VideoRequestBody } from '../model/requestBody';
import { RunReport } from './runReport';
import { openLedger } from '../../shared/ledger/taskLedger';
import type { TaskLedger } from '../../shared/ledger/taskLedger';
import { submitTask } from '../task/client';
import { videoRun } from './runPolicy';
import { downloadProperties, readTaskOutput, readWaitFields, taskWait, waitOptionsProperty } from './waitFields';
import type { WaitFields } from './waitFields';

const OPERATION = 'generate';

export const properties: INodeProperties[] = [
	modelProperty(OPERATION),
	{
		displayName: 'Prompt',
		name: 'prompt',
		type: 'string',
		typeOptions: { rows: 4 },
		required: true,
		default: '',
		placeholder: 'e.g. A red fox running through fresh snow at sunrise, cinematic',
		description: 'What the video should show',
		displayOptions: { show: { operation: [OPERATION] } },
	},
	...modelFieldProperties(OPERATION),
	{
		displayName: 'Wait for Completion',
		name: 'waitForCompletion',
		type: 'boolean',
		default: true,
		description:
			'Whether to wait until the video is ready (polling its status). Off: output the task_id at once and resume later ' +
			'with "Wait for Completion".',
		displayOptions: { show: { operation: [OPERATION] } },
	},
	...downloadProperties([OPERATION], { waitForCompletion: [true] }),
	waitOptionsProperty([OPERATION], {}, [
		{
			displayName: 'Task Ledger (Data Table ID)',
			name: 'taskLedger',
			type: 'string',
			default: '',
			placeholder: 'e.g. 3Kx9LmQp2RtV7wYz',
			description:
				'An n8n Data Table that records every paid task the moment it is submitted, so a worker that dies cannot ' +
				'lose it: Retry of the crashed execution takes its tasks over instead of paying again, and the Recover ' +
				'operation lists the ones nobody took. The table needs the string columns workflow_id, run_key, item_key, ' +
				'execution_id, state, task_id, detail and the number columns lease_until, claims. On n8n 1.x with SQLite, ' +
				'set DB_SQLITE_POOL_SIZE=3 on n8n first (2.x\'s default).',
		},
	]),
];

/** A request body, with the signed URLs issued for its binary fields (none without binary sources). */
interface SignedRequest {
	body: VideoRequestBody;
	binaryUrls: IssuedUrl[];
}

/**
 * An item ready to submit: its request as checked, and `issue` for the body to POST, with signed URLs issued anew
 * each time it is called (right before each POST: a 429 or the pace may hold it for minutes, and a URL lives only as
 * long as Max Wait from its issue).
 */
type Prepared = (SignedRequest & { issue: () => SignedRequest; warnings: string[] }) | { error: Error };

/**
 * Validates one item's parameters into a request body; nothing is sent for an invalid item. Binary fields are checked
 * here, before any item is paid for, and a URL is signed once to see that n8n can sign one the service can reach.
 */
async function checkItem(
	ctx: IExecuteFunctions,
	itemIndex: number,
	source: InputSource,
	urlSeconds: number,
): Promise<Prepared> {
	try {
		const { model, input } = readVideoParameters(ctx, itemIndex, source);
		const sources = readBinarySources(ctx, itemIndex, model, input);
		const checked = await checkBinarySources(ctx, itemIndex, model, sources);
		const issue = (): SignedRequest => {
			const binaryUrls = issueSignedUrls(ctx, checked, urlSeconds);
			const signed = { ...input };
			for (const { spec } of sources) {
				const urls = binaryUrls.filter((issued) => issued.parameter === spec.name).map((issued) => issued.url);
				signed[spec.name] = spec.media.many ? urls : urls[0];
			}
			return { body: videoRequestBody(model, signed), binaryUrls };
		};
		const first = issue();
		const warnings = await checkReachable(ctx, first.binaryUrls);
		return { ...first, issue, warnings };
	} catch (error) {
		if (error instanceof InvalidVideoRequest || error instanceof BinarySourceProblem) {
			const invalid = error instanceof InvalidVideoRequest;
			return {
				error: new NodeOperationError(
					ctx.getNode(),
					invalid ? `Invalid video request: ${error.message}` : error.message,
					{
						itemIndex,
						description: invalid
							? 'Nothing was sent to the service. The allowed values come from the model capability matrix.'
							: error.description,
					},
				),
			};
		}
		return { error: error as Error };
	}
}

interface Submission {
	taskId: string;
	resumed: boolean;
	acceptedAt: number;
	/** What the service was sent, when this run sent it (an earlier try's on Retry On Fail); not for an adopted task. */
	sent?: SignedRequest;
}

/**
 * The paid call, through the shared guard: a retry of the node resumes the accepted task instead of paying again,
 * whatever its parameters evaluate to now. With a task ledger the send is recorded before and after, and a Retry of a
 * crashed run adopts its task (taskLedger.ts).
 */
async function submitGuarded(
	ctx: IExecuteFunctions,
	scope: GuardScope,
	entry: SignedRequest & { issue: () => SignedRequest },
	lane: Lane,
	ledger: TaskLedger | undefined,
): Promise<Submission> {
	let sent: SignedRequest | undefined;
	// The body is made when the POST goes out (each attempt after a 429 too), its URLs signed then.
	const body = () => (sent = entry.issue()).body;
	// With a ledger, no POST starts while another item's accepted task is still being recorded (its own lane).
	const send = async (sendLane: Lane) => await submitTask(ctx, body, sendLane);
	const { value, resumed, acceptedAt } = await submitOnce<Submission>(ctx, {
		scope,
		itemIndex: lane.itemIndex,
		what: 'POST /v1/tasks/vendor',
		noun: 'video',
		send: async () => {
			const submitted = ledger
				? await ledger.submit(ledgerMeta(entry.body), lane, send)
				: { taskId: await send(lane), resumed: false, acceptedAt: Date.now() };
			// Nothing sent in this try (the ledger resumed or adopted the task): `sent` stays unset.
			return { ...submitted, sent };
		},
	});
	// An accepted task reused by Retry On Fail was first accepted (or adopted) by the earlier try.
	return { ...value, resumed: resumed || value.resumed, acceptedAt: resumed ? acceptedAt : value.acceptedAt };
}

/** What a ledger row says of its task besides its id (Recover lists it). */
const ledgerMeta = (body: VideoRequestBody) => ({ model: body.model, prompt: String(body.prompt ?? '') });

/** Adds which model and task an error concerns, for the error item under Continue On Fail. */
function withTaskContext(error: unknown, details: IDataObject): unknown {
	const context = (error as { context?: IDataObject }).context;
	if (context && typeof context === 'object') {
		for (const [key, value] of Object.entries(details)) if (context[key] === undefined) context[key] = value;
	}
	return error;
}

interface GenerateRun {
	/** Every item checked before any is paid for. */
	prepared: Prepared[];
	waitFields: WaitFields;
	scope: GuardScope;
	report: RunReport;
	/** Where every paid task is recorded (Options → Task Ledger), if anywhere. */
	ledger?: TaskLedger;
}

export const operation: Operation<GenerateRun> = {
	properties,
	prepare: async (ctx) => {
		const count = ctx.getInputData().length;
		const source = inputSource(ctx);
		const waitFields = readWaitFields(ctx);
		// A signed URL serves the binary for the task's Max Wait, and no longer.
		const urlSeconds = Math.ceil(waitFields.maxWaitMs / 1000);
		const prepared: Prepared[] = [];
		for (let itemIndex = 0; itemIndex < count; itemIndex++) {
			prepared.push(await checkItem(ctx, itemIndex, source, urlSeconds));
		}
		// Validate every item before paying for any: without Continue On Fail, one invalid item stops the run up front.
		const firstInvalid = prepared.find((entry): entry is { error: Error } => 'error' in entry);
		if (firstInvalid && !ctx.continueOnFail()) throw firstInvalid.error;
		const scope = guardScope(ctx);
		const options = ctx.getNodeParameter('options', 0, {}) as IDataObject;
		// The ledger names the node's own run (as a tool, the guard's scope is the tool call's, the same for every call).
		const ledger = await openLedger(ctx, String(options.taskLedger ?? ''), runIndexOf(ctx));
		// One write for the rows of every item that will be paid for (not per item: the ledger's cost is per write).
		await ledger?.plan(
			prepared.flatMap((entry, itemIndex) =>
				'error' in entry ? [] : [{ itemIndex, meta: ledgerMeta(entry.body) }],
			),
		);
		// Without Continue On Fail the first failing item fails the run: stop paying and waiting then, and report every task.
		return { prepared, waitFields, scope, report: new RunReport(ctx), ledger };
	},
	close: async ({ ledger }) => await ledger?.close(),
	policy: (_ctx, { waitFields, report }) => ({
		...videoRun(waitFields.maxConcurrency),
		// The error n8n keeps is the first item failure, naming every task this run paid for.
		failure: (error) => report.finalError(error),
	}),
	run: async (ctx, itemIndex, lane, { prepared, waitFields, scope, report, ledger }) => {
		const entry = prepared[itemIndex];
		if ('error' in entry) throw entry.error;
		const details: IDataObject = { model: entry.body.model };
		try {
			const submission = report.submissionLane(lane);
			const { taskId, resumed, acceptedAt, sent } = await submitGuarded(ctx, scope, entry, submission, ledger);
			report.paid(itemIndex, taskId);
			const submittedAt = new Date(acceptedAt).toISOString();
			// The body and URLs the service got; none for a task adopted from a crashed run (this run sent nothing, and
			// its own signed URLs are not the ones that task was given).
			Object.assign(details, {
				task_id: taskId,
				submitted_at: submittedAt,
				resumed,
				...(sent ? { request: sent.body } : {}),
				...(sent && sent.binaryUrls.length > 0 ? { binary_urls: sent.binaryUrls } : {}),
				...(entry.warnings.length > 0 ? { warnings: entry.warnings } : {}),
				...(ledger ? { ledger_table: ledger.scope.tableId } : {}),
			});
			if (!(ctx.getNodeParameter('waitForCompletion', itemIndex, true) as boolean)) {
				return {
					json: { ...details, status: 'SUBMITTED' },
					pairedItem: { item: itemIndex },
				};
			}
			const wait = taskWait(waitFields, {
				...lane,
				// Max Wait is per task: a retry that resumes it waits only what is left of it.
				since: acceptedAt,
				...report.waitHooks(itemIndex),
			});
			const item = await completeTask(ctx, taskId, wait, readTaskOutput(ctx, itemIndex, details));
			return report.finished(itemIndex, item);
		} catch (error) {
			// An item not submitted because the run was failing is recorded as such by its lane.
			report.failed(itemIndex, error);
			throw withTaskContext(error, details);
		}
	},
};
