import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { nodeBase, operationProperty } from '../shared/descriptions/nodeBase';
import { route } from '../shared/run/router';
import type { Operations } from '../shared/run/router';
import * as check from './actions/check.operation';
import * as download from './actions/download.operation';
import * as generate from './actions/generate.operation';
import * as getStatus from './actions/getStatus.operation';
import * as listArtifacts from './actions/listArtifacts.operation';
import * as recover from './actions/recover.operation';
import * as waitForCompletion from './actions/waitForCompletion.operation';

const OPERATIONS: Operations = {
	check: check.operation,
	download: download.operation,
	generate: generate.operation,
	getStatus: getStatus.operation,
	listArtifacts: listArtifacts.operation,
	recover: recover.operation,
	waitForCompletion: waitForCompletion.operation,
};

export class GenGatewayVideo implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gen Gateway Video',
		name: 'genGatewayVideo',
		icon: { light: 'file:genGatewayVideo.svg', dark: 'file:genGatewayVideo.dark.svg' },
		group: ['transform'],
		...nodeBase(),
		// The operation's display name, not its value (Generate also names the model); one literal, as n8n's lint rule
		// wants it. test/unit/video.subtitle.test.ts evaluates it for every option below.
		subtitle:
			'={{ $parameter["operation"] === "generate" ? "Generate: " + $parameter["model"] : $parameter["operation"] === "check" ? "Check" : $parameter["operation"] === "download" ? "Download" : $parameter["operation"] === "getStatus" ? "Get Status" : $parameter["operation"] === "listArtifacts" ? "List Artifacts" : $parameter["operation"] === "recover" ? "Recover" : $parameter["operation"] === "waitForCompletion" ? "Wait for Completion" : $parameter["operation"] }}',
		description:
			'Generate videos with the Gen Gateway asynchronous task API: submit once, wait with polling, download the mp4',
		defaults: { name: 'Gen Gateway Video' },
		usableAsTool: true,
		// Check routes items to two outputs (Done, Still Running), Recover too (Tasks, Unknown Outcome); every other
		// operation has one. An expression, as n8n's Switch node does it: the editor and the engine evaluate it against
		// the node's parameters.
		outputs: `={{ $parameter["operation"] === "check" ? [{ "type": "main", "displayName": "Done" }, { "type": "main", "displayName": "Still Running" }] : $parameter["operation"] === "recover" ? [{ "type": "main", "displayName": "Tasks" }, { "type": "main", "displayName": "Unknown Outcome" }] : ["main"] }}`,
		properties: [
			// No Resource selector (n8n's lint asks for one above 5 operations): every operation acts on a video task, and
			// a selector with one choice would add a click and change every saved workflow's parameters for nothing.
			operationProperty(
				[
					{
						name: 'Check',
						value: 'check',
						action: 'Check a video task and route it by whether it is done',
						description:
							"One status check, for a durable wait with n8n's Wait node: a finished task downloads its video and leaves " +
								"by Done, a running one by Still Running",
					},
					{
						name: 'Download',
						value: 'download',
						action: 'Download a video task artifact',
						description: 'Stream an artifact of a finished task (by default the video) into binary data',
					},
					{
						name: 'Generate',
						value: 'generate',
						action: 'Generate a video',
						description:
							'Submit a paid video task from a prompt; by default wait for it and download the mp4 into binary data',
					},
					{
						name: 'Get Status',
						value: 'getStatus',
						action: 'Get the status of a video task',
						description: 'One status check of a task: QUEUED, IN_PROGRESS (with progress), SUCCESS or FAILURE',
					},
					{
						name: 'List Artifacts',
						value: 'listArtifacts',
						action: 'List the artifacts of a video task',
						description: 'List the files a finished task produced',
					},
					{
						name: 'Recover',
						value: 'recover',
						action: 'Recover paid video tasks that no run delivered',
						description:
							"After a crash: the paid tasks in a Task Ledger that no run took to the end, one item each, for Wait for " +
								'Completion; submissions with an unknown outcome on a second output',
					},
					{
						name: 'Wait for Completion',
						value: 'waitForCompletion',
						action: 'Wait for a video task to complete',
						description: 'Resume a task submitted earlier: poll until it ends, then download the video',
					},
				],
				'generate',
			),
			...generate.properties,
			...check.properties,
			...getStatus.properties,
			...waitForCompletion.properties,
			...listArtifacts.properties,
			...download.properties,
			...recover.properties,
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await route(this, OPERATIONS);
	}
}
