/** What a programmatic user may want: the node and credential classes, and the video capability matrix. */
export { GenGatewayApi } from './credentials/GenGatewayApi.credentials';
export { GenGatewayModels } from './nodes/GenGatewayModels/GenGatewayModels.node';
export { GenGatewayChat } from './nodes/GenGatewayChat/GenGatewayChat.node';
export { GenGatewayImage } from './nodes/GenGatewayImage/GenGatewayImage.node';
export { GenGatewayVideo } from './nodes/GenGatewayVideo/GenGatewayVideo.node';
export { VIDEO_MODELS, VIDEO_MODEL_IDS, findVideoModel } from './nodes/GenGatewayVideo/model/matrix';
export type { VideoModelCapabilities } from './nodes/GenGatewayVideo/model/matrix';
