/** vLLM's error body (current versions, VLLM_API section 3): `{"error":{message,type,param,code}}`. */

export interface ApiError {
  status: 400 | 404 | 500 | 503;
  message: string;
}

const TYPES: Record<ApiError["status"], string> = {
  400: "BadRequestError",
  404: "NotFoundError",
  500: "InternalServerError",
  503: "ServiceUnavailableError",
};

export function errorBody(e: ApiError): { error: { message: string; type: string; param: null; code: number } } {
  return { error: { message: e.message, type: TYPES[e.status], param: null, code: e.status } };
}

export const badRequest = (message: string): ApiError => ({ status: 400, message });
