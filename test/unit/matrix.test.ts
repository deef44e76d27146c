import { existsSync, readFileSync } from 'fs';
import { resolve } from 'path';

import { GK_RATIOS, SD_RATIOS, SDX_NSFW_C1_RATIOS, VIDEO_MODELS } from '../../nodes/GenGatewayVideo/model/matrix';

/**
 * The matrix module is checked against the contract's own text of section 4.3, parsed independently here, so a typo
 * in the data cannot hide behind tests that derive from the same data. The text is kept in the repository
 * (test/fixtures/contract-matrix.md), so the comparison runs in any clone; where the contract itself is beside the
 * repository (../shared/SERVICE-INTERFACE.md, as in .ci/run), the fixture must equal its section 4.3 word for word.
 */
const fixturePath = resolve(__dirname, '../fixtures/contract-matrix.md');
const section = readFileSync(fixturePath, 'utf8');
const contractPath = resolve(__dirname, '../../../shared/SERVICE-INTERFACE.md');

describe('the matrix fixture', () => {
	it('is section 4.3 of the shared contract, word for word (when the contract is beside the repository)', () => {
		if (!existsSync(contractPath)) {
			// .ci/run (this project's CI, with ../shared beside the checkout) sets GEN_GATEWAY_CONTRACT_REQUIRED: there
			// its absence is a failure, not a skip. GitHub's jobs (CI=true, no ../shared) compare with the fixture only.
			expect(process.env.GEN_GATEWAY_CONTRACT_REQUIRED).toBeFalsy();
			process.stderr.write(`matrix.test: ${contractPath} not found; compared with the fixture only\n`);
			return;
		}
		const contract = readFileSync(contractPath, 'utf8');
		expect(section).toBe(contract.slice(contract.indexOf('### 4.3'), contract.indexOf('## 5.')));
	});
});

const ratioSets: Record<string, string[]> = {};
for (const line of section.split('\n')) {
	const match = /^- (SD set|GK set|Ratios of `sdx_2\.0_nsfw_c1`): (.+)\.$/.exec(line.trim());
	if (match) ratioSets[match[1]] = match[2].split(',').map((s) => s.trim());
}

const rows = section
	.split('\n')
	.filter((line) => /^\| [a-z]/.test(line) && !line.startsWith('| Model'))
	.map((line) =>
		line
			.split('|')
			.slice(1, -1)
			.map((cell) => cell.trim()),
	);

const yes = (cell: string) => cell.startsWith('yes');
const limit = (cell: string) => (cell === '-' ? 0 : Number(cell));

describe('capability matrix equals section 4.3 of the contract', () => {
	it('has the 11 models of the table, in its order', () => {
		expect(rows).toHaveLength(11);
		expect(VIDEO_MODELS.map((m) => m.id)).toEqual(rows.map((r) => r[0]));
	});

	it('has the three ratio sets as listed', () => {
		expect([...SD_RATIOS]).toEqual(ratioSets['SD set']);
		expect([...GK_RATIOS]).toEqual(ratioSets['GK set']);
		expect([...SDX_NSFW_C1_RATIOS]).toEqual(ratioSets['Ratios of `sdx_2.0_nsfw_c1`']);
	});

	it.each(rows.map((r) => [r[0], r]))('row %s', (id, row) => {
		const [, duration, defaultDuration, ratios, resolutions, defaultResolution, refs, frames, audio, seed] = row;
		const model = VIDEO_MODELS.find((m) => m.id === id)!;
		const [min, max] = /^(\d+)-(\d+)/.exec(duration)!.slice(1).map(Number);
		expect(model.duration).toEqual({
			min,
			max,
			required: duration.includes('required'),
			default: Number(defaultDuration),
		});
		const ratioSet = ratios === 'see above' ? ratioSets['Ratios of `sdx_2.0_nsfw_c1`'] : ratioSets[ratios];
		expect([...model.aspectRatios]).toEqual(ratioSet);
		expect([...model.resolutions]).toEqual(resolutions.split(',').map((s) => s.trim()));
		expect(model.defaultResolution).toBe(defaultResolution);
		const [images, videos, audios] = refs.split('/').map((s) => limit(s.trim()));
		expect(model.references).toEqual({ images, videos, audios });
		const [first, last] = frames.split(' / ');
		expect(model.firstImage).toBe(yes(first));
		expect(model.lastImage).toBe(yes(last));
		expect(model.audio).toEqual({ supported: yes(audio), default: audio === 'yes (on)' });
		expect(model.seed).toBe(yes(seed));
	});
});
