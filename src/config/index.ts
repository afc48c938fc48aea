export * from './api-config.js';
export { resolveConfig, findConfigFile, type ConfigFlags, type ResolveConfigInput } from './resolve-config.js';
export { loadConfigFile, parseConfigFile, type ConfigFile, type ProfileValues } from './config-file.js';
export { sandboxConfig, sandboxEnv, type SandboxDirectory } from './sandbox-config.js';
export { addConfigOptions, configFlagsFrom } from './config-flags.js';
export { checkTransportSecurity, isLoopbackUrl } from './url-security.js';
