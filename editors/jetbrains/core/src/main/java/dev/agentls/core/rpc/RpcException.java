package dev.agentls.core.rpc;

import com.google.gson.JsonElement;

/**
 * A JSON-RPC error: received in a response (the server refused a request) or raised by a
 * handler of a server request (sent back as the error response).
 */
public class RpcException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public static final int PARSE_ERROR = -32700;
    public static final int INVALID_REQUEST = -32600;
    public static final int METHOD_NOT_FOUND = -32601;
    public static final int INVALID_PARAMS = -32602;
    public static final int INTERNAL_ERROR = -32603;
    public static final int SERVER_NOT_INITIALIZED = -32002;
    public static final int REQUEST_CANCELLED = -32800;
    // agentls's own codes sit outside the ranges JSON-RPC and LSP reserve (-32768..-32000).
    public static final int SESSION_NOT_FOUND = -31001;
    public static final int SESSION_BUSY = -31002;
    public static final int ENGINE_UNAVAILABLE = -31003;
    public static final int PROVIDER_UNAVAILABLE = -31004;
    public static final int UNAUTHORIZED = -31005;
    public static final int REWIND_REFUSED = -31006;

    private final int code;
    private final transient JsonElement data;

    public RpcException(int code, String message, JsonElement data) {
        super(message);
        this.code = code;
        this.data = data;
    }

    public RpcException(int code, String message) {
        this(code, message, null);
    }

    public int code() {
        return code;
    }

    /** The error's {@code data} member (for -32602: the failing field paths), or null. */
    public JsonElement data() {
        return data;
    }
}
