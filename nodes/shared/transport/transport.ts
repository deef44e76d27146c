import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IN8nHttpFullResponse,
} from 'n8n-workflow';

import { eachAttemptWithin } from './answerDeadline';
import { joinUrl, normaliseBaseUrl } from './baseUrl';
import { CREDENTIAL_TYPE, credentialsOf, decryptedCredentials } from './credentials';
import { apiErrorFromResponse, asNodeError, messageFromBody, networkError, redact } from './errors';
import type { Lane } from './lane';
import { pacerOf } from './pacer';
import { redactDeep, secretVariants } from './redaction';
import type { PaceClass, Pacer } from './pacer';
import {
	answerVerdict,
	DEFAULT_RETRY_POLICY,
	failureVerdict,
	nextRetryDelay,
	parseRetryAfter,
	rateLimitedDelay,
} from './retry';
import type { RetryPolicy } from './retry';
import { errorTexts, isTlsHandshakeFailure, tlsError } from './tls';
import { followRead, MAX_READ_REDIRECTS } from './redirects';
import type { Followed, RedirectHop } from './redirects';
import { abortableSleep, MAX_TIMER_MS } from './wait';

/**
 * The only place HTTP happens. Every request goes through n8n's `httpRequestWithAuthentication` (credential injection,
 * proxy settings, the execution's cancel signal), gets the service's error message and a hint on failure, and is
 * retried only where that is safe: a paid submission whose outcome is unknown is never sent twice.
 */

/** Node's Readable, named through n8n's own helper type (community nodes may not import 'stream'). */
export type Readable = Exclude<Parameters<IExecuteFunctions['helpers']['prepareBinaryData']>[0], Buffer>;

export type GatewayFunctions = IExecuteFunctions | ILoadOptionsFunctions;

interface GatewayRequest {
	method: IHttpRequestMethods;
	/** Path under the base URL, starting with /v1. */
	path: string;
	/** A JSON body, or a function that makes it right before each attempt goes out (e.g. to sign its URLs then). */
	body?: IDataObject | (() => IDataObject);
	qs?: IDataObject;
	/**
	 * 'read': safe to repeat, retried after 429/502/503/504 and after network failures.
	 * 'submit': may cost money, retried only after an explicit 429/502/503 answer (the service said no) or when the
	 * connection was never made; a 500/504/other 5xx or any failure after the request went out is an unknown outcome
	 * and ends here. The whole rule: answerVerdict / failureVerdict in retry.ts.
	 */
	kind: 'read' | 'submit';
	/** The item's lane: its pace turn, then its gate, are taken here for the request (`inLane`). */
	lane?: Lane;
	/** Without a lane: which item an error names. */
	itemIndex?: number;
	/**
	 * Streams only: the 2xx answer must be a file (the video). JSON, HTML or text, or an empty body, is then an error
	 * page or nothing, never stored as the file.
	 */
	expectFile?: boolean;
	/** Hands a 3xx answer back instead of following it (the video content may redirect to a temporary file URL). */
	manualRedirect?: boolean;
	/** Extra request headers (a binary download's Accept-Encoding, Range and If-Range). */
	headers?: Record<string, string>;
	/** Idle timeout of the socket. */
	timeoutMs?: number;
	/** How the user can raise `timeoutMs`; the error says it when the timeout runs out. */
	timeoutAdvice?: string;
	retry?: Partial<RetryPolicy>;
	/**
	 * Its place in the credential's pace (pacer.ts): 'poll' for status polls, 'submit' and 'finish' (other reads) by
	 * default from `kind`. `turnTaken`: the turn taken for a held lane (`holdLane`), for its first request only.
	 */
	pace?: PaceClass;
	turnTaken?: number;
	/**
	 * How old what the request serves is (epoch ms), for its place among its class in the pace: a status poll is as
	 * old as its task, so the task most likely finished is asked first. Default: when it asks.
	 */
	paceAge?: number;
	/** Epoch ms after which a 429 is not waited out any more (an item's Max Wait); default: maxRateLimitedMs. */
	deadline?: number;
}

export interface StreamResponse {
	body: Readable;
	headers: Record<string, string | string[] | undefined>;
	statusCode: number;
	/**
	 * Stops reading and hangs up, even while the server keeps the connection open. `body.destroy()` alone does not on
	 * n8n 2.x: its axios (1.13+, with n8n's maxContentLength) hands over a wrapper around the socket's stream, and
	 * destroying that wrapper waits for the next chunk that may never come; aborting the request closes the socket.
	 */
	close(): void;
}

const DEFAULT_TIMEOUT_MS = 120_000;

/**
 * The socket's idle time-out as n8n's request takes it: at most Node's longest timer (about 24.8 days). A longer one
 * fires at once, before anything is sent, and a paid request would fail as an unknown outcome (found by an attack:
 * Timeout 3,000,000 s). The whole-answer bound (answerDeadline.ts) waits any length.
 */
const socketTimeout = (ms: number) => Math.min(ms, MAX_TIMER_MS);

function cancelSignal(ctx: GatewayFunctions): AbortSignal | undefined {
	return 'getExecutionCancelSignal' in ctx ? ctx.getExecutionCancelSignal() : undefined;
}

/**
 * A signal that fires when the execution is cancelled or when `hangUp` is aborted. n8n (1.x and 2.x) sets a request's
 * abort signal from `this.getExecutionCancelSignal()`, so the joined signal goes in through the context given as
 * `this`: the same context, with that one method answering the joined signal.
 */
function withHangUp<T extends GatewayFunctions>(ctx: T, hangUp: AbortController): { self: T; signal: AbortSignal } {
	const cancel = cancelSignal(ctx);
	const signal = cancel ? AbortSignal.any([cancel, hangUp.signal]) : hangUp.signal;
	if (!('getExecutionCancelSignal' in ctx)) return { self: ctx, signal };
	return { self: Object.create(ctx, { getExecutionCancelSignal: { value: () => signal } }) as T, signal };
}

function streamResponse(response: IN8nHttpFullResponse, hangUp: AbortController): StreamResponse {
	const body = response.body as Readable;
	return {
		body,
		headers: response.headers as StreamResponse['headers'],
		statusCode: response.statusCode,
		close: () => {
			// The body first: axios then has no stream left to report the abort on (nobody would listen to it).
			body.destroy();
			hangUp.abort();
		},
	};
}

/** Waits that end at once when the execution is cancelled. */
export async function waitFor(ctx: GatewayFunctions, ms: number): Promise<void> {
	await abortableSleep(ms, cancelSignal(ctx), 'getExecutionId' in ctx ? ctx.getExecutionId() : '');
}

/**
 * The pacer of this execution on its credential's shared pace (pacer.ts), or undefined outside an execution (loading
 * options). Feature-detected: an n8n without execution ids or node credentials is simply not paced.
 */
export function pacerFor(ctx: GatewayFunctions): Pacer | undefined {
	if (!('getExecutionId' in ctx) || typeof ctx.getExecutionId !== 'function') return undefined;
	const executionId = ctx.getExecutionId();
	if (!executionId) return undefined;
	const credential = ctx.getNode().credentials?.[CREDENTIAL_TYPE];
	return pacerOf(String(executionId), credential?.id ?? credential?.name ?? '');
}

/**
 * Waits for a request's turn in the credential's pace and returns when it was granted. A lane's turn is taken before
 * its gate (holdLane: so the pace, not the gate's arrival order, decides who goes next) and passed on as `turnTaken`;
 * a 429 in between makes the request ask again.
 */
async function paceTurn(ctx: GatewayFunctions, pace: PaceClass, age?: number): Promise<number> {
	await pacerFor(ctx)?.acquire(async (ms) => await waitFor(ctx, ms), pace, age);
	return Date.now();
}

/**
 * Holds the item's lane for `work` (a download that spans several requests): the pace turn first, then the gate. The
 * turn is handed to `work` for its first request; later requests ask the pace themselves.
 */
export async function holdLane<T>(
	ctx: GatewayFunctions,
	lane: Lane,
	pace: PaceClass,
	work: (turnTaken: number) => Promise<T>,
	age?: number,
): Promise<T> {
	const turnTaken = await paceTurn(ctx, pace, age);
	return await lane.gate(async () => await work(turnTaken));
}

const paceOf = (request: GatewayRequest): PaceClass => request.pace ?? (request.kind === 'submit' ? 'submit' : 'finish');

/** One request in its lane (pace turn, then gate), or, without a lane, paced by withRetries alone. */
async function inLane<T>(
	ctx: GatewayFunctions,
	request: GatewayRequest,
	work: (request: GatewayRequest) => Promise<T>,
): Promise<T> {
	const { lane } = request;
	if (!lane) return await work(request);
	const itemIndex = request.itemIndex ?? lane.itemIndex;
	const pace = paceOf(request);
	return await holdLane(ctx, lane, pace, async (turnTaken) => await work({ ...request, itemIndex, turnTaken }), request.paceAge);
}

interface FailureCause {
	code: string;
	aborted: boolean;
}

/**
 * n8n wraps axios errors in a NodeApiError; the network code (ECONNRESET, ECONNREFUSED, ...) survives in its
 * `httpCode` (n8n-core 1.x drops `cause`) or on the axios error itself. Only the code is read, never the config.
 */
function failureCause(ctx: GatewayFunctions, error: unknown): FailureCause | undefined {
	if (cancelSignal(ctx)?.aborted) return { code: 'ERR_CANCELED', aborted: true };
	const candidates = [error, (error as { cause?: unknown })?.cause];
	for (const candidate of candidates) {
		const record = candidate as { code?: unknown; httpCode?: unknown; name?: unknown } | undefined;
		if (record?.name === 'CanceledError') return { code: 'ERR_CANCELED', aborted: true };
		for (const code of [record?.code, record?.httpCode]) {
			if (code === 'ERR_CANCELED') return { code, aborted: true };
			if (typeof code === 'string' && /^[A-Z][A-Z_]+$/.test(code)) return { code, aborted: false };
		}
	}
	return undefined;
}

/**
 * The credential's key in every form a service may echo it (redaction.ts secretVariants: as stored, trimmed as servers
 * see it, percent-encoded), so that a service echoing it never puts it into a message.
 */
export async function credentialSecrets(ctx: GatewayFunctions): Promise<string[]> {
	try {
		const credentials = await credentialsOf(ctx);
		return typeof credentials.apiKey === 'string' ? secretVariants(credentials.apiKey) : [];
	} catch {
		return [];
	}
}

/**
 * The credential's base URL. One with a user name or password is refused before anything is sent: n8n's request would
 * send them as Basic credentials in place of the key (found by an attack on issue 51).
 */
async function baseUrlOf(ctx: GatewayFunctions, itemIndex?: number): Promise<string> {
	const credentials = await credentialsOf(ctx);
	const baseUrl = credentials.baseUrl as string;
	let parsed: URL | undefined;
	try {
		parsed = new URL(normaliseBaseUrl(baseUrl));
	} catch {
		parsed = undefined;
	}
	if (parsed && (parsed.username !== '' || parsed.password !== '')) {
		throw new NodeOperationError(ctx.getNode(), "The credential's Base URL holds a user name or password", {
			itemIndex,
			description:
				'Remove "user:password@" from the Base URL of the Gen Gateway API credential. The service takes the API key ' +
				'only, and the user name and password would be sent in its place. Nothing was sent.',
		});
	}
	return baseUrl;
}

/** Reads at most `limit` bytes of an error body from a stream, then drops the rest. */
async function readSmall(stream: Readable, limit = 64 * 1024): Promise<string> {
	const chunks: Buffer[] = [];
	let size = 0;
	try {
		for await (const chunk of stream) {
			const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
			chunks.push(buffer);
			size += buffer.length;
			if (size >= limit) break;
		}
	} catch {
		// A broken error body still leaves us the status code.
	} finally {
		stream.destroy();
	}
	return Buffer.concat(chunks).toString('utf8').slice(0, limit);
}

function headerValue(headers: IN8nHttpFullResponse['headers'], name: string): unknown {
	return (headers as Record<string, unknown> | undefined)?.[name];
}

interface AttemptSpec {
	/** For messages and logs: method and path (a foreign URL without its query string). */
	method: IHttpRequestMethods;
	path: string;
	kind: GatewayRequest['kind'];
	itemIndex?: number;
	stream: boolean;
	policy: RetryPolicy;
	timeoutMs: number;
	timeoutAdvice?: string;
	manualRedirect?: boolean;
	pace: PaceClass;
	turnTaken?: number;
	paceAge?: number;
	deadline?: number;
}

/** axios's own timeout ("timeout of 1000ms exceeded"), not an OS-level ETIMEDOUT while connecting. */
function isRequestTimeout(code: string, texts: readonly string[]): boolean {
	if (code !== 'ECONNABORTED' && code !== 'ETIMEDOUT') return false;
	return texts.some((text) => /timeout (of \d+ms )?exceeded/i.test(text));
}

/**
 * Sends through `perform` until a 2xx answer, retrying where the rules allow (see GatewayRequest.kind), and turns
 * every other ending into a NodeApiError with the service's message and a hint.
 */
async function withRetries(
	ctx: GatewayFunctions,
	spec: AttemptSpec,
	perform: () => Promise<IN8nHttpFullResponse>,
): Promise<IN8nHttpFullResponse> {
	const node = ctx.getNode();
	const started = Date.now();
	// The path may come from a redirect's Location (a file URL the service chose): masked for every message and log
	// line below, once, when the first of them needs it (a request that simply succeeds reads no credential for it).
	let shownPath: string | undefined;
	const where = async () => {
		shownPath ??= redact(spec.path, await credentialSecrets(ctx));
		return { method: spec.method, path: shownPath, itemIndex: spec.itemIndex };
	};
	const label = async () => `${spec.method} ${(await where()).path}`;
	const pacer = pacerFor(ctx);
	const sleep = async (ms: number) => await waitFor(ctx, ms);
	// Outside an execution (the editor loading options) nobody paces and nobody waits long: the usual time budget.
	const deadline = pacer
		? (spec.deadline ?? started + (spec.policy.maxRateLimitedMs ?? DEFAULT_RETRY_POLICY.maxRateLimitedMs!))
		: started + spec.policy.maxTotalMs;
	// 429s in a row (waited out until the deadline); other failures count against the attempts and the time budget.
	let limited = 0;
	let failures = 0;
	let firstFailureAt: number | undefined;

	for (let attempt = 1; ; attempt++) {
		let response: IN8nHttpFullResponse;
		// When this attempt's turn in the pace was granted: a 429 to a request sent before the pace last slowed down
		// does not slow it again (pacer.ts).
		let grantedAt = spec.turnTaken ?? Date.now();
		try {
			if (pacer) {
				// A turn taken before the gate holds unless a 429 came since; asking again then, the request goes first
				// (it holds a lane of the gate: behind the others it would keep them from using their turns).
				const ahead = attempt > 1 || spec.turnTaken !== undefined;
				if (!(attempt === 1 && spec.turnTaken !== undefined && pacer.turnHolds(spec.turnTaken))) {
					await pacer.acquire(sleep, ahead ? 'retry' : spec.pace, spec.paceAge);
					grantedAt = Date.now();
				}
			}
			response = await perform();
		} catch (error) {
			const cause = failureCause(ctx, error);
			// Cancelled (passed on unchanged) or not a failure of the request itself.
			if (!cause || cause.aborted) throw asNodeError(ctx, error, spec.itemIndex);
			// Nothing was sent, and the same certificate fails the same way again: not retried.
			if (isTlsHandshakeFailure(cause.code, errorTexts(error))) {
				throw tlsError(node, { ...(await where()), code: cause.code });
			}
			// Which failures are retried and which are unknown outcomes: the one rule in retry.ts.
			const verdict = failureVerdict(spec.kind, cause.code);
			const timedOut = isRequestTimeout(cause.code, errorTexts(error));
			// The node's own Timeout ran out (its advice is set): not tried again, it would wait as long again.
			const mayRetry = verdict === 'retry' && !(timedOut && spec.timeoutAdvice !== undefined);
			failures++;
			firstFailureAt ??= Date.now();
			const delay = mayRetry
				? nextRetryDelay({ attempt: failures, elapsedMs: Date.now() - firstFailureAt, policy: spec.policy })
				: undefined;
			if (delay !== undefined) {
				ctx.logger.warn(`Gen Gateway: ${await label()} failed (${cause.code}); retry ${attempt + 1} in ${delay} ms`);
				await waitFor(ctx, delay);
				continue;
			}
			throw networkError(node, {
				...(await where()),
				code: cause.code,
				outcomeUnknown: verdict === 'unknown',
				reason: timedOut
					? `no answer within ${spec.timeoutMs / 1000} s (its timeout ran out)`
					: verdict === 'final'
						? `its redirects lead nowhere usable (a loop, more than ${MAX_READ_REDIRECTS} in a row, or a target ` +
							'that is not http(s)); not retried, the same answer would come again'
						: undefined,
				note:
					[mayRetry ? `Tried ${attempt} time(s).` : '', timedOut ? (spec.timeoutAdvice ?? '') : '']
						.filter(Boolean)
						.join(' ') || undefined,
			});
		}

		const status = response.statusCode;
		if (status !== 429) pacer?.onAccepted(grantedAt);
		if (spec.manualRedirect && status >= 300 && status < 400) return response;
		// Accepted, retried, refused or unknown: the one rule in retry.ts (answerVerdict).
		const verdict = answerVerdict(spec.kind, status);
		if (verdict === 'accepted') return response;

		const body = spec.stream ? await readSmall(response.body as Readable) : response.body;
		if (verdict === 'unknown') {
			// A paid POST answered 500/504/other 5xx: the service (or a gateway in front of it) failed after the
			// request arrived and may have created the work (docs/service-interface.md §4.2, rule 4): never resent.
			const secrets = await credentialSecrets(ctx);
			const said = redact(messageFromBody(body).message, secrets);
			const location = headerValue(response.headers, 'location');
			throw networkError(node, {
				...(await where()),
				code: `HTTP_${status}`,
				outcomeUnknown: true,
				reason:
					status === 504
						? 'a gateway answered 504 (it timed out waiting for the service, which may have received the request)'
						: status >= 300 && status < 400
							? `the service answered ${status}, a redirect to ${redirectTarget(location, secrets)}; a paid ` +
								'request never follows a redirect (it could be sent, and paid for, twice)'
							: `the service answered ${status} (${said}), which does not say whether it created the work`,
			});
		}
		if (verdict === 'retry' && status === 429) {
			// Rate limited: nothing was done. Waited out until the deadline; every execution on the credential slows with it.
			const retryAfterMs = parseRetryAfter(headerValue(response.headers, 'retry-after'));
			limited++;
			const delay = rateLimitedDelay({ limited, retryAfterMs, remainingMs: deadline - Date.now(), policy: spec.policy });
			if (delay !== undefined) {
				// The pace slows at once; the log line (which may read the credential to mask the path) after it. The
				// refused request itself waits its Retry-After, then asks for a turn first in line.
				pacer?.onLimited(delay, grantedAt);
				ctx.logger.warn(`Gen Gateway: ${await label()} answered 429; retry ${attempt + 1} in ${delay} ms`);
				await waitFor(ctx, delay);
				continue;
			}
		} else if (verdict === 'retry') {
			const retryAfterMs = parseRetryAfter(headerValue(response.headers, 'retry-after'));
			limited = 0;
			failures++;
			firstFailureAt ??= Date.now();
			const delay = nextRetryDelay({
				attempt: failures,
				elapsedMs: Date.now() - firstFailureAt,
				retryAfterMs,
				policy: spec.policy,
			});
			if (delay !== undefined) {
				ctx.logger.warn(`Gen Gateway: ${await label()} answered ${status}; retry ${attempt + 1} in ${delay} ms`);
				await waitFor(ctx, delay);
				continue;
			}
		}
		const { foreignOrigin } = response as Followed;
		const secrets = await credentialSecrets(ctx);
		throw apiErrorFromResponse(node, {
			...(await where()),
			status,
			body,
			secrets,
			note:
				[
					foreignOrigin === undefined
						? ''
						: // The origin is the server's choice: a host name may hold the key.
							`It was redirected to ${redact(foreignOrigin, secrets)}, another origin than the base URL's: the API key is sent to ` +
							"the base URL's origin only, so it was not sent there. If the service has moved, enter its new address " +
							'as the Base URL.',
					attempt > 1 ? `Tried ${attempt} times.` : '',
				]
					.filter(Boolean)
					.join(' ') || undefined,
		});
	}
}

/**
 * A hop to another origin: a plain request without the credential, built afresh (no header of the keyed request that
 * could carry it), with redirects off like every request (redirects.ts follows them).
 */
function keylessHop(options: IHttpRequestOptions, hop: RedirectHop): IHttpRequestOptions {
	const headers = Object.fromEntries(
		Object.entries(options.headers ?? {}).filter(
			([name]) => !['authorization', 'proxy-authorization', 'cookie'].includes(name.toLowerCase()),
		),
	);
	return {
		method: hop.method as IHttpRequestMethods,
		url: hop.url,
		headers,
		body: hop.keepsBody ? options.body : undefined,
		json: options.json,
		encoding: options.encoding,
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		timeout: options.timeout,
		disableFollowRedirect: true,
	};
}

/**
 * Sends a request and, for a read, the redirects of its chain (redirects.ts: the key on the base URL's origin only),
 * each request with an abort of its own, so that a redirect's body is dropped and its socket closed (destroying a
 * stream's body alone does not close it on n8n 2.x: StreamResponse.close). `self` and `options.abortSignal` carry the
 * attempt's signal; `keyed`: the first request carries the key (a request to the service, not to a file host).
 */
async function sendChain(
	ctx: GatewayFunctions,
	self: GatewayFunctions,
	options: IHttpRequestOptions,
	chain: { keyed: boolean; follows: boolean; stream: boolean; baseUrl: string },
): Promise<IN8nHttpFullResponse> {
	const hangUps = new Map<IN8nHttpFullResponse, AbortController>();
	const sendOne = async (hopOptions: IHttpRequestOptions, withKey: boolean) => {
		const own = new AbortController();
		const attempt = options.abortSignal as AbortSignal | undefined;
		const signal = attempt ? AbortSignal.any([attempt, own.signal]) : own.signal;
		const sent = { ...hopOptions, abortSignal: signal };
		// n8n takes an authenticated request's signal from the context's cancel signal: this request's own.
		const hopSelf =
			'getExecutionCancelSignal' in self
				? (Object.create(self, { getExecutionCancelSignal: { value: () => signal } }) as GatewayFunctions)
				: self;
		const response = (
			withKey
				? // The run's one read of the credential (credentials.ts): n8n reads nothing more, and sends this key.
					await ctx.helpers.httpRequestWithAuthentication.call(hopSelf, CREDENTIAL_TYPE, sent, {
						credentialsDecrypted: await decryptedCredentials(ctx),
					})
				: await ctx.helpers.httpRequest(sent)
		) as IN8nHttpFullResponse;
		hangUps.set(response, own);
		return response;
	};
	const first = await sendOne(options, chain.keyed);
	if (!chain.follows) return first;
	const followed = await followRead(
		first,
		{ url: options.url, method: options.method ?? 'GET', baseUrl: normaliseBaseUrl(chain.baseUrl), keyed: chain.keyed },
		async (hop) =>
			await sendOne(
				hop.withKey
					? { ...options, url: hop.url, qs: undefined, method: hop.method as IHttpRequestMethods, body: hop.keepsBody ? options.body : undefined }
					: keylessHop(options, hop),
				hop.withKey,
			),
		(redirect) => {
			if (chain.stream) (redirect.body as Readable | undefined)?.destroy?.();
			hangUps.get(redirect)?.abort();
		},
	);
	// Failed as the HTTP library fails a chain that leads nowhere: the one rule for its code (retry.ts).
	if ('failure' in followed) throw new NodeApiError(ctx.getNode(), { message: followed.reason }, { httpCode: followed.failure });
	return followed;
}

/** A request to the service: its base URL, the credential's Bearer key, the key on the base URL's origin only. */
async function send(
	ctx: GatewayFunctions,
	request: GatewayRequest,
	stream: boolean,
	hangUp?: AbortController,
): Promise<IN8nHttpFullResponse> {
	const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
	const baseUrl = await baseUrlOf(ctx, request.itemIndex);
	const options: IHttpRequestOptions = {
		method: request.method,
		url: joinUrl(baseUrl, request.path),
		qs: request.qs,
		json: !stream,
		encoding: stream ? 'stream' : undefined,
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		timeout: socketTimeout(timeoutMs),
		// No redirect is followed by n8n's helper: it would carry the key to a sub-domain or from http to https.
		// A read's chain is followed hop by hop below (redirects.ts: the key on the base URL's origin only); a paid POST
		// never follows one (a 307 would send the body, and pay, again elsewhere; a 302 turns into a GET whose answer is
		// not the submission's): its outcome is unknown (withRetries says so, with the Location).
		disableFollowRedirect: true,
		sendCredentialsOnCrossOriginRedirect: false,
	};
	const follows = !request.manualRedirect && request.kind !== 'submit';
	if (request.body !== undefined) options.headers = { 'Content-Type': 'application/json' };
	if (request.headers) options.headers = { ...options.headers, ...request.headers };
	const spec: AttemptSpec = {
		method: request.method,
		path: request.path,
		kind: request.kind,
		itemIndex: request.itemIndex,
		stream,
		policy: { ...DEFAULT_RETRY_POLICY, ...request.retry },
		timeoutMs,
		timeoutAdvice: request.timeoutAdvice,
		manualRedirect: request.manualRedirect,
		pace: paceOf(request),
		turnTaken: request.turnTaken,
		paceAge: request.paceAge,
		deadline: request.deadline,
	};
	let self = ctx;
	// Each attempt's answer within the timeout as a whole, not only between two bytes (answerDeadline.ts): every
	// attempt has an abort signal of its own, fired by its deadline, by `hangUp`, or by the execution's cancel.
	const bounded = eachAttemptWithin(timeoutMs, hangUp, (abort) => {
		const joined = withHangUp(ctx, abort);
		self = joined.self;
		options.abortSignal = joined.signal;
	});
	return await withRetries(
		ctx,
		spec,
		bounded(async () => {
			const { body } = request;
			options.body = typeof body === 'function' ? body() : body;
			return await sendChain(ctx, self, options, { keyed: true, follows, stream, baseUrl });
		}),
	);
}

/** A JSON request; resolves with the parsed body of a 2xx answer, or throws a NodeApiError. */
export async function gatewayJson<T = unknown>(ctx: GatewayFunctions, request: GatewayRequest): Promise<T> {
	return await inLane(ctx, request, async (inLaneRequest) => await json<T>(ctx, inLaneRequest));
}

async function json<T>(ctx: GatewayFunctions, request: GatewayRequest): Promise<T> {
	const response = await send(ctx, request, false);
	const body = response.body;
	// One redaction at the boundary (redaction.ts): nothing the service echoes reaches a node with the key in it.
	if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body)) {
		return redactDeep(body, await credentialSecrets(ctx)) as T;
	}
	// A 2xx that is not JSON (empty, truncated, an HTML page): never guess what it meant. For a submission the
	// service said yes, so a task may exist without us knowing its id: that is an unknown outcome, never resent.
	// The snippet of the body goes into the message: a service that echoes the key must not put it there.
	const message = redact(messageFromBody(body).message, await credentialSecrets(ctx));
	if (request.kind === 'submit') {
		throw networkError(ctx.getNode(), {
			code: 'UNREADABLE_ANSWER',
			reason: `the service answered ${response.statusCode} but its body could not be read (${message})`,
			method: request.method,
			path: request.path,
			itemIndex: request.itemIndex,
			outcomeUnknown: true,
		});
	}
	throw apiErrorFromResponse(ctx.getNode(), {
		status: response.statusCode,
		body: { error: { message: `Unreadable answer: ${message}` } },
		method: request.method,
		path: request.path,
		itemIndex: request.itemIndex,
		secrets: await credentialSecrets(ctx),
	});
}

/** A 2xx that cannot be the expected file (an error page, JSON, nothing) becomes a clear error instead. */
async function rejectNonFile(
	ctx: GatewayFunctions,
	request: Pick<GatewayRequest, 'method' | 'path' | 'itemIndex'>,
	response: IN8nHttpFullResponse,
): Promise<void> {
	const type = String(headerValue(response.headers, 'content-type') ?? '')
		.split(';')[0]
		.trim()
		.toLowerCase();
	const textual = type.startsWith('text/') || /^application\/([\w.-]+\+)?json$/.test(type);
	const empty = String(headerValue(response.headers, 'content-length') ?? '') === '0';
	if (!textual && !empty) return;
	const text = await readSmall(response.body as Readable);
	throw apiErrorFromResponse(ctx.getNode(), {
		status: response.statusCode,
		body: { error: { message: `Not the file: ${messageFromBody(text).message}` } },
		method: request.method,
		path: request.path,
		itemIndex: request.itemIndex,
		secrets: await credentialSecrets(ctx),
	});
}

/** A request whose 2xx body is handed over as a stream (downloads, server-sent events). */
export async function gatewayStream(ctx: GatewayFunctions, request: GatewayRequest): Promise<StreamResponse> {
	return await inLane(ctx, request, async (inLaneRequest) => await stream(ctx, inLaneRequest));
}

async function stream(ctx: GatewayFunctions, request: GatewayRequest): Promise<StreamResponse> {
	const hangUp = new AbortController();
	const response = await send(ctx, request, true, hangUp);
	const redirected = response.statusCode >= 300 && response.statusCode < 400;
	if (request.expectFile && !redirected) await rejectNonFile(ctx, request, response);
	return streamResponse(response, hangUp);
}

/** A URL for error messages: no query string (it may hold a CDN signature) and no user info. */
function urlForMessages(url: URL): string {
	return `${url.origin}${url.pathname}`;
}

/** A redirect's Location for a message: quoted, without query string or user info, redacted, at most 200 characters. */
function redirectTarget(location: unknown, secrets: readonly string[]): string {
	const raw = String((Array.isArray(location) ? location[0] : location) ?? '').trim();
	if (raw === '') return 'nowhere (no Location header)';
	let shown = raw;
	try {
		const url = new URL(raw, 'http://relative.invalid');
		shown = url.host === 'relative.invalid' ? url.pathname : urlForMessages(url);
	} catch {
		// Not a URL: quoted as it came, bounded.
	}
	return JSON.stringify(redact(shown, secrets).slice(0, 200));
}

/** What a file download adds to a plain GET: its headers (Range, If-Range…), and whether a page is refused at once. */
interface DownloadOptions {
	headers?: Record<string, string>;
	/** The node's Timeout for the answer to begin (default the transport's), and how to raise it. */
	timeoutMs?: number;
	timeoutAdvice?: string;
	/** The 2xx answer must be a file: JSON, HTML, text or an empty body is refused by its headers (rejectNonFile). */
	expectFile?: boolean;
}

/**
 * The base URL as the URL parser writes it (host in lower case, no default port), without a trailing slash, so that a
 * file URL under it is recognised however the user typed the base URL; undefined when it cannot be read.
 */
function canonicalBase(raw: unknown): string | undefined {
	try {
		return new URL(normaliseBaseUrl(raw)).href.replace(/\/+$/, '');
	} catch {
		return undefined;
	}
}

/** Binary downloads ask for the bytes as stored: a compressed body cut short inflates without an error. */
const IDENTITY = { 'Accept-Encoding': 'identity' };

/**
 * Downloads a file the service pointed to by absolute URL (an image on a CDN, where a video's content redirected), as
 * a stream. The key goes only to the service's own base URL (then this is an ordinary authenticated read); any other
 * host gets a plain request without it. A download is a read: safe to repeat, retried after 429/502/503/504 and
 * network failures. Redirected or not, an `expectFile` answer goes through the same checks (rejectNonFile).
 */
export async function downloadUrl(
	ctx: IExecuteFunctions,
	url: string,
	itemIndex?: number,
	download: DownloadOptions = {},
): Promise<StreamResponse> {
	const node = ctx.getNode();
	let target: URL;
	try {
		target = new URL(url);
	} catch {
		throw new NodeOperationError(node, 'The service returned a file URL that cannot be read', {
			description: `Expected an absolute http(s) URL, got "${redact(url, await credentialSecrets(ctx)).slice(0, 100)}".`,
			itemIndex,
		});
	}
	if (target.protocol !== 'http:' && target.protocol !== 'https:') {
		throw new NodeOperationError(node, `The service returned a ${target.protocol} URL; only http(s) is downloaded`, {
			itemIndex,
		});
	}
	// User info would replace any key with other credentials (Basic); a file URL never needs it.
	target.username = '';
	target.password = '';
	const rawBase = await baseUrlOf(ctx, itemIndex);
	const base = canonicalBase(rawBase);
	if (base !== undefined && target.href.startsWith(`${base}/`)) {
		return await gatewayStream(ctx, {
			method: 'GET',
			path: target.href.slice(base.length),
			kind: 'read',
			itemIndex,
			expectFile: download.expectFile,
			headers: { ...IDENTITY, ...download.headers },
			timeoutMs: download.timeoutMs,
			timeoutAdvice: download.timeoutAdvice,
		});
	}

	// A foreign host (a CDN): a plain request without the key, retried like any read.
	const hangUp = new AbortController();
	let signal: AbortSignal | undefined;
	// Its headers within the timeout as a whole, every attempt (answerDeadline.ts); the body is downloadChecked's.
	const bounded = eachAttemptWithin(download.timeoutMs ?? DEFAULT_TIMEOUT_MS, hangUp, (abort) => {
		signal = withHangUp(ctx, abort).signal;
	});
	let response: IN8nHttpFullResponse;
	try {
		response = await withRetries(
			ctx,
			{
				method: 'GET',
				path: urlForMessages(target),
				kind: 'read',
				itemIndex,
				stream: true,
				policy: DEFAULT_RETRY_POLICY,
				timeoutMs: download.timeoutMs ?? DEFAULT_TIMEOUT_MS,
				timeoutAdvice: download.timeoutAdvice,
				pace: 'finish',
			},
			bounded(
				async () =>
					await sendChain(
						ctx,
						ctx,
						{
							method: 'GET',
							url: target.href,
							headers: { ...IDENTITY, ...download.headers },
							encoding: 'stream',
							json: false,
							returnFullResponse: true,
							ignoreHttpStatusErrors: true,
							timeout: socketTimeout(download.timeoutMs ?? DEFAULT_TIMEOUT_MS),
							abortSignal: signal,
							// Its redirects followed by sendChain, never with the key (it never had it).
							disableFollowRedirect: true,
						},
						{ keyed: false, follows: true, stream: true, baseUrl: rawBase },
					),
			),
		);
	} catch (error) {
		throw asFileUrlError(ctx, error, itemIndex);
	}
	if (download.expectFile) {
		try {
			await rejectNonFile(ctx, { method: 'GET', path: urlForMessages(target), itemIndex }, response);
		} catch (error) {
			hangUp.abort();
			throw asNodeError(ctx, error, itemIndex);
		}
	}
	return streamResponse(response, hangUp);
}

/**
 * A file host's refusal (403, 404, 410) is about the URL, not the API key (none was sent to it): signed file URLs
 * expire, some work once only. The hint says that instead of "check the API key's permissions".
 */
function asFileUrlError(ctx: IExecuteFunctions, error: unknown, itemIndex?: number): Error {
	const failed = asNodeError(ctx, error, itemIndex);
	const status = Number((failed as { httpCode?: unknown }).httpCode);
	if (failed instanceof NodeApiError && status >= 400 && status < 500 && status !== 429) {
		failed.description = `The file URL the service returned was refused by its host (HTTP ${status}). No API key is ` +
			`sent to another host, so this is about the URL itself: signed file URLs expire (often within minutes or an ` +
			`hour) and some work only once. Files are fetched right after generation; fetch any kept URL promptly.`;
	}
	return failed;
}
