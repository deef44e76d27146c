// The end-to-end toolkit: a real n8n (scripts/install-n8n.sh), homes with our built package installed as n8n
// installs a community package, headless imports and runs, the server with an owner session, and secret scans.
export { ensureN8n, type N8nInstall } from './support/install';
export { ensureBuilt, distProblem } from './support/build';
export {
	createN8nHome,
	N8nHome,
	parseRun,
	randomId,
	type CredentialImport,
	type ExecuteResult,
	type LogLevel,
	type N8nHomeOptions,
} from './support/home';
export { DEFAULT_OWNER, FRESH_CONNECTION, type N8nServer, type Owner, type RestResponse, type ServerOptions } from './support/server';
export { findSecret, secretForms, type SecretHit } from './support/secrets';
export { linearWorkflow, nodeItems, nodeJson, runError, TRIGGER_NAME, type NodeSpec } from './workflows/linear';
export { e2eMajor, nodeType, NODE_TYPE_PREFIX, PACKAGE_NAME, REPO_ROOT } from './support/paths';
export { freePort } from './support/process';
export {
	cleanNpmEnv,
	installedPackageDir,
	installPackage,
	nodesFolder,
	packedTarball,
	type InstallRoute,
} from './support/packageInstall';
export { ModuleProbe, type LoadedModule } from './support/moduleProbe';
