package dev.agentls.intellij;

import com.intellij.ide.BrowserUtil;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;
import org.cef.browser.CefBrowser;
import org.cef.browser.CefFrame;
import org.cef.callback.CefCallback;
import org.cef.handler.CefRequestHandlerAdapter;
import org.cef.handler.CefResourceHandler;
import org.cef.handler.CefResourceHandlerAdapter;
import org.cef.handler.CefResourceRequestHandler;
import org.cef.handler.CefResourceRequestHandlerAdapter;
import org.cef.misc.BoolRef;
import org.cef.misc.IntRef;
import org.cef.misc.StringRef;
import org.cef.network.CefRequest;
import org.cef.network.CefResponse;

/**
 * Serves the panel's files from memory for one made-up host; nothing leaves the machine.
 * Navigating the page anywhere else opens the system browser instead.
 */
final class PanelResources extends CefRequestHandlerAdapter {
    record Resource(byte[] bytes, String mimeType) {
        static Resource of(String text, String mimeType) {
            return new Resource(text.getBytes(StandardCharsets.UTF_8), mimeType);
        }
    }

    private final String host;
    private final Function<String, Resource> files;

    PanelResources(String host, Function<String, Resource> files) {
        this.host = host;
        this.files = files;
    }

    private boolean ours(String url) {
        try {
            URI uri = URI.create(url);
            return "http".equals(uri.getScheme()) && host.equals(uri.getHost());
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    @Override
    public boolean onBeforeBrowse(CefBrowser browser, CefFrame frame, CefRequest request, boolean userGesture,
                                  boolean isRedirect) {
        String url = request.getURL();
        if (ours(url)) return false;
        if (userGesture && url.matches("(?i)^(https?|mailto):.*")) BrowserUtil.browse(url);
        return true;
    }

    @Override
    public CefResourceRequestHandler getResourceRequestHandler(CefBrowser browser, CefFrame frame, CefRequest request,
                                                               boolean isNavigation, boolean isDownload,
                                                               String requestInitiator, BoolRef disableDefaultHandling) {
        if (!ours(request.getURL())) return null;
        return new CefResourceRequestHandlerAdapter() {
            @Override
            public CefResourceHandler getResourceHandler(CefBrowser b, CefFrame f, CefRequest r) {
                String path = URI.create(r.getURL()).getPath().replaceFirst("^/+", "");
                Resource resource = files.apply(path);
                return resource == null ? new Bytes(404, new Resource(new byte[0], "text/plain")) : new Bytes(200, resource);
            }
        };
    }

    /** One response from a byte array. */
    private static final class Bytes extends CefResourceHandlerAdapter {
        private final int status;
        private final Resource resource;
        private int offset;

        Bytes(int status, Resource resource) {
            this.status = status;
            this.resource = resource;
        }

        @Override
        public boolean processRequest(CefRequest request, CefCallback callback) {
            callback.Continue();
            return true;
        }

        @Override
        public void getResponseHeaders(CefResponse response, IntRef responseLength, StringRef redirectUrl) {
            response.setStatus(status);
            response.setMimeType(resource.mimeType());
            response.setHeaderByName("Cache-Control", "no-store", true);
            responseLength.set(resource.bytes().length);
        }

        @Override
        public boolean readResponse(byte[] dataOut, int bytesToRead, IntRef bytesRead, CefCallback callback) {
            int left = resource.bytes().length - offset;
            if (left <= 0) {
                bytesRead.set(0);
                return false;
            }
            int n = Math.min(left, bytesToRead);
            System.arraycopy(resource.bytes(), offset, dataOut, 0, n);
            offset += n;
            bytesRead.set(n);
            return true;
        }
    }
}
