import { readFileSync } from 'fs';
import { join } from 'path';

import { answerVerdict, failureVerdict } from '../../nodes/shared/transport/retry';

const STATUSES = [400, 401, 403, 404, 408, 409, 410, 422, 429, 500, 501, 502, 503, 504, 520];

describe('the rule for answers to a paid POST (one place: nodes/shared/transport/retry.ts)', () => {
	it('refusals, retries and unknown outcomes', () => {
		const by = (verdict: string) => STATUSES.filter((status) => answerVerdict('submit', status) === verdict);
		expect(by('retry')).toEqual([429, 502, 503]);
		expect(by('refused')).toEqual([400, 401, 403, 404, 408, 409, 410, 422]);
		expect(by('unknown')).toEqual([500, 501, 504, 520]);
		expect(answerVerdict('submit', 201)).toBe('accepted');
	});

	it('reads retry 504 too and never have an unknown outcome', () => {
		expect(STATUSES.filter((status) => answerVerdict('read', status) === 'retry')).toEqual([429, 502, 503, 504]);
		expect(STATUSES.some((status) => answerVerdict('read', status) === 'unknown')).toBe(false);
	});

	it('a connection that failed after sending is unknown for a paid POST; one never made is retried', () => {
		expect(failureVerdict('submit', 'ECONNRESET')).toBe('unknown');
		expect(failureVerdict('submit', 'ETIMEDOUT')).toBe('unknown');
		expect(failureVerdict('submit', 'ECONNREFUSED')).toBe('retry');
		expect(failureVerdict('read', 'ECONNRESET')).toBe('retry');
	});

	it('a redirect that leads nowhere usable ends a read at once (not an outage to retry); a paid POST never follows one', () => {
		expect(failureVerdict('read', 'ERR_FR_TOO_MANY_REDIRECTS')).toBe('final');
		expect(failureVerdict('read', 'ERR_FR_REDIRECTION_FAILURE')).toBe('final');
		expect(failureVerdict('submit', 'ERR_FR_TOO_MANY_REDIRECTS')).toBe('unknown');
		expect(answerVerdict('submit', 307)).toBe('unknown');
		expect(answerVerdict('submit', 302)).toBe('unknown');
	});

	/** The statuses named in a markdown table's first column, with the verdict its other cells state. */
	function tableVerdicts(markdown: string, heading: string): Map<number, string> {
		const section = markdown.slice(markdown.indexOf(heading));
		const table = section.slice(section.indexOf('\n|')).split('\n\n')[0];
		const verdicts = new Map<number, string>();
		for (const row of table.split('\n').filter((line) => line.startsWith('|'))) {
			const [first, ...rest] = row.split('|').slice(1, -1);
			const said = rest.join(' ').toLowerCase();
			const verdict = /unknown/.test(said)
				? 'unknown'
				: /retried/.test(said)
					? 'retry'
					: /refus|error at once/.test(said)
						? 'refused'
						: /accepted|goes on/.test(said)
							? 'accepted'
							: 'unclear';
			for (const match of first.matchAll(/\b([1-5]\d\d)\b/g)) verdicts.set(Number(match[1]), verdict);
		}
		return verdicts;
	}

	it.each([
		['docs/nodes.md', '### Never paying twice by accident'],
		['docs/reliability.md', 'The rule for a paid POST, in one table'],
	])('%s states exactly the rule the code applies', (file, heading) => {
		const verdicts = tableVerdicts(readFileSync(join(__dirname, '../..', file), 'utf8'), heading);
		expect([...verdicts.keys()].sort()).toEqual(expect.arrayContaining([400, 401, 403, 404, 409, 422, 429, 500, 502, 503, 504]));
		for (const [status, verdict] of verdicts) expect([status, verdict]).toEqual([status, answerVerdict('submit', status)]);
	});
});
