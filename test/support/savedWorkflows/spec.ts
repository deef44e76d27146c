/**
 * What a user set in the editor, node by node, for the saved-workflow fixtures (test/fixtures/workflows/<version>/).
 * `scripts/saved-workflows.ts` turns each workflow into what n8n's editor stores (defaults dropped, see editorSave.ts)
 * for a NEW version folder and records the requests it sends. The folders already committed are never rewritten:
 * they are what users of that version saved. Edit this file only to add coverage for the next version's folder.
 *
 * Coverage: every node and operation, Video models from each capability group of the matrix, options set, expressions
 * (static, over $json, over another node's output), Check's two outputs, and the four `…Tool` variants under an AI
 * Agent filled by $fromAI.
 */

export interface SpecNode {
	name: string;
	/** Short type for our nodes (`genGatewayVideo`, `genGatewayVideoTool`), full type for n8n's own. */
	type: string;
	typeVersion?: number;
	/** What the user set; the editor's save drops whatever equals the default. */
	parameters: Record<string, unknown>;
	/** [x, y] on the canvas; also the order in which n8n (execution order v1) runs parallel branches. */
	position: [number, number];
	credentials?: Record<string, { id: string; name: string }>;
	webhookId?: string;
}

export interface SpecWorkflow {
	/** File name without .json. */
	file: string;
	name: string;
	nodes: SpecNode[];
	/** [from, to] on main output 0, [from, to, outputIndex] for another main output, or [from, to, 'ai_tool'|…]. */
	connections: Array<[string, string] | [string, string, number | string]>;
	/** What the stand-in agent asks each tool, by the tool's node name (n8n's AI Agent gets these from the model). */
	toolCalls?: Array<{ tool: string; args: Record<string, unknown> }>;
}

export const TRIGGER = 'When clicking ‘Execute workflow’';
const trigger: SpecNode = { name: TRIGGER, type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {}, position: [0, 0] };

const rl = (value: string, mode: 'list' | 'id' = 'list') =>
	mode === 'list' ? { __rl: true, mode, value, cachedResultName: value } : { __rl: true, mode, value };

const fromTrigger = (names: string[]): Array<[string, string]> => names.map((name) => [TRIGGER, name]);
const column = (index: number): [number, number] => [260, index * 200];

const models: SpecWorkflow = {
	file: 'models',
	name: 'Saved 0.1.0: Models',
	nodes: [
		trigger,
		{ name: 'All Models', type: 'genGatewayModels', parameters: { operation: 'getMany', returnAll: true }, position: column(0) },
		{
			name: 'First Three sd Models',
			type: 'genGatewayModels',
			parameters: { returnAll: false, limit: 3, idContains: 'sd_' },
			position: column(1),
		},
		{
			name: 'Models by Expression',
			type: 'genGatewayModels',
			parameters: { returnAll: false, limit: '={{ 1 + 1 }}', idContains: '={{ "gk" + "_" }}' },
			position: column(2),
		},
	],
	connections: fromTrigger(['All Models', 'First Three sd Models', 'Models by Expression']),
};

const chat: SpecWorkflow = {
	file: 'chat',
	name: 'Saved 0.1.0: Chat',
	nodes: [
		trigger,
		{
			name: 'Message a Model',
			type: 'genGatewayChat',
			parameters: { operation: 'message', model: rl('gpt-4o-mini'), messages: { values: [{ role: 'user', content: 'Say hello' }] } },
			position: column(0),
		},
		{
			name: 'Message with Options',
			type: 'genGatewayChat',
			parameters: {
				model: rl('gk-chat-1', 'id'),
				systemMessage: 'You are terse.',
				messages: {
					values: [
						{ role: 'system', content: 'Answer in English.' },
						{ role: 'user', content: 'Name a colour' },
						{ role: 'assistant', content: 'Blue' },
						{ role: 'user', content: '={{ "Name " + "another" }}' },
					],
				},
				simplify: false,
				options: {
					maxTokens: 64,
					temperature: 0.2,
					topP: 0.9,
					seed: 42,
					stop: 'END',
					streaming: 'never',
					timeout: 120,
					extraBody: '{ "user": "fixture" }',
				},
			},
			position: column(1),
		},
		{
			name: 'Message for JSON, Streamed',
			type: 'genGatewayChat',
			parameters: {
				model: rl('={{ "gpt-4o-mini" }}', 'id'),
				messages: { values: [{ content: 'Give me a JSON object' }] },
				options: { jsonOutput: true, streaming: 'always' },
			},
			position: column(2),
		},
		{
			name: 'Create a Response',
			type: 'genGatewayChat',
			parameters: {
				operation: 'response',
				model: rl('gpt-4o-mini'),
				instructions: 'Answer briefly',
				input: { values: [{ role: 'developer', content: 'Be terse' }, { role: 'user', content: 'What is n8n?' }] },
				options: { maxTokens: 32, streaming: 'always', timeout: 60 },
			},
			position: column(3),
		},
		{
			name: 'Create a Response, Plain',
			type: 'genGatewayChat',
			parameters: {
				operation: 'response',
				model: rl('gk-chat-1'),
				input: { values: [{ content: 'Hello there' }] },
				simplify: false,
				options: { temperature: 0.5, streaming: 'never', extraBody: '{ "metadata": { "source": "fixture" } }' },
			},
			position: column(4),
		},
	],
	connections: fromTrigger(['Message a Model', 'Message with Options', 'Message for JSON, Streamed', 'Create a Response', 'Create a Response, Plain']),
};

const image: SpecWorkflow = {
	file: 'image',
	name: 'Saved 0.1.0: Image',
	nodes: [
		trigger,
		{ name: 'Image to Binary', type: 'genGatewayImage', parameters: { model: rl('img-1'), prompt: 'a red fox' }, position: column(0) },
		{
			name: 'Two Image URLs',
			type: 'genGatewayImage',
			parameters: {
				operation: 'generate',
				model: rl('img-1-hd', 'id'),
				prompt: '={{ "a blue " + "heron" }}',
				n: 2,
				size: '512x512',
				returnAs: 'returned',
				options: { responseFormat: 'url', outputMode: 'oneItem', timeout: 90 },
			},
			position: column(1),
		},
		{
			name: 'Image from Base64',
			type: 'genGatewayImage',
			parameters: {
				model: rl('img-1'),
				prompt: 'a green lizard',
				size: '256x256',
				options: { responseFormat: 'b64_json', binaryPropertyName: 'picture', extraBody: '{ "user": "fixture" }' },
			},
			position: column(2),
		},
		{
			// Two images, Output at its default (one item per image).
			name: 'Two Images as Items',
			type: 'genGatewayImage',
			parameters: { model: rl('img-1'), prompt: 'two small boats', n: 2, size: '256x256' },
			position: column(3),
		},
	],
	connections: fromTrigger(['Image to Binary', 'Two Image URLs', 'Image from Base64', 'Two Images as Items']),
};

// Small artifacts, tasks that end at once: the fixtures run in a few seconds. The markers are part of the prompt, so
// they are recorded in the request bodies too. A task that never ends stays QUEUED, so Check's answer is always the same.
const INSTANT = '[[instant]] [[size=4k]]';

const videoGenerate: SpecWorkflow = {
	file: 'video-generate',
	name: 'Saved 0.1.0: Video Generate across the matrix',
	nodes: [
		trigger,
		{
			// The node's default model, untouched: the saved parameters hold only the prompt.
			name: 'Default Model',
			type: 'genGatewayVideo',
			parameters: { operation: 'generate', model: 'sd_2.5_discount', prompt: `a fox in the snow ${INSTANT}` },
			position: column(0),
		},
		{
			name: 'Every Field, No Wait',
			type: 'genGatewayVideo',
			parameters: {
				model: 'sd_2.5_special',
				prompt: 'a lighthouse at dusk',
				duration: 10,
				aspectRatio: '21:9',
				resolution: '1080p',
				generateAudio: false,
				seed: '42',
				referenceImages: 'https://example.com/a.png, https://example.com/b.png',
				referenceVideos: 'https://example.com/clip.mp4',
				referenceAudios: 'https://example.com/sound.mp3',
				waitForCompletion: false,
			},
			position: column(1),
		},
		{
			name: 'First and Last Frame',
			type: 'genGatewayVideo',
			parameters: {
				model: 'sdx_2.0_nsfw_c1',
				prompt: `a door opening ${INSTANT}`,
				aspectRatio: '4:3',
				resolution: '480p',
				generateAudio: true,
				firstImage: 'https://example.com/first.png',
				lastImage: 'https://example.com/last.png',
				downloadVideo: false,
				options: { pollInterval: 1, maxWait: 2 },
			},
			position: column(2),
		},
		{
			name: 'Fast Special into Field',
			type: 'genGatewayVideo',
			parameters: {
				model: 'sd_2.0_fast_special',
				prompt: `a river ${INSTANT}`,
				duration: 6,
				binaryPropertyName: 'video',
				options: { maxConcurrency: 2, maxWait: 5, pollInterval: 2 },
			},
			position: column(3),
		},
		{
			name: 'GK Video by Expression',
			type: 'genGatewayVideo',
			parameters: {
				model: 'gk_video',
				prompt: `={{ "a city " + "at night" }} ${INSTANT}`,
				duration: '={{ 4 + 6 }}',
				aspectRatio: '3:2',
				referenceImages: 'https://example.com/city.png',
			},
			position: column(4),
		},
		{
			name: 'GK 1.5 from a Frame',
			type: 'genGatewayVideo',
			parameters: {
				model: 'gk_1.5',
				prompt: `a bird taking off ${INSTANT}`,
				resolution: '480p',
				firstImage: 'https://example.com/bird.png',
				downloadVideo: false,
			},
			position: column(5),
		},
		{
			name: 'Mini Discount, Model by Expression',
			type: 'genGatewayVideo',
			parameters: { model: '={{ "sd_2.0_mini_discount" }}', prompt: 'a paper boat', seed: '={{ 7 }}', waitForCompletion: false },
			position: column(6),
		},
	],
	connections: fromTrigger([
		'Default Model',
		'Every Field, No Wait',
		'First and Last Frame',
		'Fast Special into Field',
		'GK Video by Expression',
		'GK 1.5 from a Frame',
		'Mini Discount, Model by Expression',
	]),
};

const SUBMITTED = "={{ $('Submit').item.json.task_id }}";

const videoTasks: SpecWorkflow = {
	file: 'video-tasks',
	name: 'Saved 0.1.0: Video task operations',
	nodes: [
		trigger,
		{
			name: 'Submit',
			type: 'genGatewayVideo',
			parameters: { model: 'sd_2.0_discount', prompt: `a sailing ship ${INSTANT}`, duration: 8, waitForCompletion: false },
			position: [260, 0],
		},
		{ name: 'Get Status', type: 'genGatewayVideo', parameters: { operation: 'getStatus', taskId: '={{ $json.task_id }}' }, position: [480, 0] },
		{
			name: 'Wait for Completion',
			type: 'genGatewayVideo',
			parameters: {
				operation: 'waitForCompletion',
				taskId: SUBMITTED,
				downloadVideo: false,
				options: { maxConcurrency: 1, maxWait: 1, pollInterval: 2 },
			},
			position: [700, 0],
		},
		{ name: 'List Artifacts', type: 'genGatewayVideo', parameters: { operation: 'listArtifacts', taskId: SUBMITTED }, position: [920, 0] },
		{
			name: 'Download',
			type: 'genGatewayVideo',
			parameters: { operation: 'download', taskId: SUBMITTED, artifactKey: 'video', binaryPropertyName: 'clip' },
			position: [1140, 0],
		},
		{
			name: 'Wait and Download',
			type: 'genGatewayVideo',
			parameters: { operation: 'waitForCompletion', taskId: SUBMITTED },
			position: [1360, 0],
		},
	],
	connections: [
		[TRIGGER, 'Submit'],
		['Submit', 'Get Status'],
		['Get Status', 'Wait for Completion'],
		['Wait for Completion', 'List Artifacts'],
		['List Artifacts', 'Download'],
		['Download', 'Wait and Download'],
	],
};

const videoCheck: SpecWorkflow = {
	file: 'video-check',
	name: 'Saved 0.1.0: Video Check (durable wait)',
	nodes: [
		trigger,
		{
			name: 'Submit Ready',
			type: 'genGatewayVideo',
			parameters: { model: 'sd_2.0_mini_special', prompt: `a snail ${INSTANT}`, waitForCompletion: false },
			position: [260, 0],
		},
		// Task ID and Submitted At at their defaults ($json.task_id, $json.submitted_at): stored as nothing.
		{ name: 'Check', type: 'genGatewayVideo', parameters: { operation: 'check' }, position: [480, 0] },
		{ name: 'Ready Done', type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {}, position: [700, -100] },
		{ name: 'Ready Still Running', type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {}, position: [700, 100] },
		{
			name: 'Submit Endless',
			type: 'genGatewayVideo',
			parameters: { model: 'sd_2.0_fast_discount', prompt: 'a glacier [[never]] [[queuedMs=600000]]', waitForCompletion: false },
			position: [260, 400],
		},
		{
			name: 'Check Endless',
			type: 'genGatewayVideo',
			parameters: {
				operation: 'check',
				taskId: '={{ $json.task_id }}',
				submittedAt: '={{ $json.submitted_at }}',
				downloadVideo: false,
				options: { maxConcurrency: 2, maxWait: 5 },
			},
			position: [480, 400],
		},
		{ name: 'Endless Done', type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {}, position: [700, 300] },
		{ name: 'Endless Still Running', type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {}, position: [700, 500] },
	],
	connections: [
		[TRIGGER, 'Submit Ready'],
		['Submit Ready', 'Check'],
		['Check', 'Ready Done', 0],
		['Check', 'Ready Still Running', 1],
		[TRIGGER, 'Submit Endless'],
		['Submit Endless', 'Check Endless'],
		['Check Endless', 'Endless Done', 0],
		['Check Endless', 'Endless Still Running', 1],
	],
};

const agentTools: SpecWorkflow = {
	file: 'agent-tools',
	name: 'Saved 0.1.0: AI Agent with the four tools',
	nodes: [
		trigger,
		{
			name: 'AI Agent',
			type: '@n8n/n8n-nodes-langchain.agent',
			typeVersion: 3.1,
			parameters: { promptType: 'define', text: 'Make a short video of a fox, an image of a heron, and list two models', options: {} },
			position: [260, 0],
		},
		{
			name: 'OpenAI Chat Model',
			type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
			typeVersion: 1.3,
			// As n8n 2.41.1's editor saves it (builtInTools: {} included; the e2e round trip checks).
			parameters: { model: rl('gpt-4o-mini'), builtInTools: {}, options: {} },
			position: [120, 220],
			credentials: { openAiApi: { id: 'GgFixtureOpenAi1', name: 'Gen Gateway as OpenAI' } },
		},
		{
			name: 'Generate Video',
			type: 'genGatewayVideoTool',
			parameters: {
				descriptionType: 'manual',
				toolDescription: 'Generates a video and waits until it is ready. Returns the task id and status.',
				model: 'sd_2.0_fast_discount',
				prompt: "={{ $fromAI('prompt', 'What the video should show', 'string') }}",
				duration: "={{ $fromAI('duration', 'Length in seconds, 5 to 15', 'number', 5) }}",
				aspectRatio: "={{ $fromAI('aspect_ratio', 'One of 16:9, 9:16, 1:1', 'string', '16:9') }}",
				options: { maxWait: 5 },
			},
			position: [320, 220],
		},
		{
			name: 'Generate Image',
			type: 'genGatewayImageTool',
			parameters: {
				descriptionType: 'manual',
				toolDescription: 'Generates one image from a prompt and returns its URL.',
				model: rl('img-1'),
				prompt: "={{ $fromAI('prompt', 'What the image should show', 'string') }}",
				size: '256x256',
				returnAs: 'returned',
			},
			position: [480, 220],
		},
		{
			// Tool description left to n8n ("Set Automatically"): nothing stored for it.
			name: 'List Models',
			type: 'genGatewayModelsTool',
			parameters: { returnAll: false, limit: "={{ $fromAI('limit', 'How many models', 'number', 3) }}" },
			position: [640, 220],
		},
		{
			name: 'Ask Chat',
			type: 'genGatewayChatTool',
			parameters: {
				descriptionType: 'manual',
				toolDescription: 'Asks a text model a question.',
				model: rl('gpt-4o-mini'),
				messages: { values: [{ content: "={{ $fromAI('question', 'The question to ask', 'string') }}" }] },
				options: { maxTokens: 16 },
			},
			position: [800, 220],
		},
	],
	connections: [
		[TRIGGER, 'AI Agent'],
		['OpenAI Chat Model', 'AI Agent', 'ai_languageModel'],
		['Generate Video', 'AI Agent', 'ai_tool'],
		['Generate Image', 'AI Agent', 'ai_tool'],
		['List Models', 'AI Agent', 'ai_tool'],
		['Ask Chat', 'AI Agent', 'ai_tool'],
	],
	toolCalls: [
		{ tool: 'Generate Video', args: { prompt: `a fox running ${INSTANT}`, duration: 6, aspect_ratio: '9:16' } },
		{ tool: 'Generate Image', args: { prompt: 'a heron' } },
		{ tool: 'List Models', args: { limit: 2 } },
		{ tool: 'Ask Chat', args: { question: 'Which model makes videos?' } },
	],
};

/** The Data Table the ledger workflow names (an in-memory one when it runs: run.ts). */
export const SAVED_LEDGER_TABLE = 'tblSavedLedger01';

/** Since 0.1.0 (issue 30): Generate with Options → Task Ledger, then Recover of this workflow's ledger. */
const videoLedger: SpecWorkflow = {
	file: 'video-ledger',
	name: 'Saved: Video task ledger and Recover',
	nodes: [
		trigger,
		{
			name: 'Submit with Ledger',
			type: 'genGatewayVideo',
			parameters: {
				model: 'sd_2.0_fast_discount',
				prompt: `a lantern ${INSTANT}`,
				waitForCompletion: false,
				options: { taskLedger: SAVED_LEDGER_TABLE },
			},
			position: [260, 0],
		},
		{ name: 'Recover', type: 'genGatewayVideo', parameters: { operation: 'recover', taskLedger: SAVED_LEDGER_TABLE }, position: [480, 0] },
	],
	connections: [
		[TRIGGER, 'Submit with Ledger'],
		['Submit with Ledger', 'Recover'],
	],
};

export const SPEC: SpecWorkflow[] = [models, chat, image, videoGenerate, videoTasks, videoCheck, agentTools, videoLedger];
