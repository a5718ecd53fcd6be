package dev.agentls.intellij;

import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.application.ModalityState;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.ui.Messages;
import com.intellij.openapi.ui.popup.JBPopup;
import com.intellij.openapi.ui.popup.JBPopupFactory;
import com.intellij.openapi.ui.popup.JBPopupListener;
import com.intellij.openapi.ui.popup.LightweightWindowEvent;
import com.intellij.ui.SimpleListCellRenderer;
import com.intellij.ui.components.JBCheckBox;
import com.intellij.ui.components.JBTextField;
import com.intellij.util.ui.JBUI;
import dev.agentls.core.client.Interactions;
import dev.agentls.core.client.UserPrompts;
import dev.agentls.core.protocol.Answer;
import dev.agentls.core.protocol.Wire;
import java.awt.event.FocusAdapter;
import java.awt.event.FocusEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import javax.swing.BoxLayout;
import javax.swing.JButton;
import javax.swing.JPanel;
import org.jetbrains.annotations.NotNull;

/**
 * The server's questions as popup choosers (one after the other; checkboxes when several
 * answers are allowed; "Other…" for free text) and its permission requests as dialogs. What the
 * picks mean is decided in the core ({@link Interactions}); closing a chooser declines.
 */
final class IdePrompts implements UserPrompts {
    private final Project project;

    IdePrompts(Project project) {
        this.project = project;
    }

    @Override
    public CompletableFuture<Wire.AskQuestionResult> askQuestions(Wire.AskQuestionParams params) {
        CompletableFuture<Wire.AskQuestionResult> result = new CompletableFuture<>();
        onEdt(() -> ask(params.questions(), new ArrayList<>(), result));
        return result;
    }

    @Override
    public CompletableFuture<Wire.RequestPermissionResult> requestPermission(Wire.RequestPermissionParams params) {
        CompletableFuture<Wire.RequestPermissionResult> result = new CompletableFuture<>();
        onEdt(() -> {
            if (result.isDone() || project.isDisposed()) return;
            PermissionDialog dialog = new PermissionDialog(project, params);
            // The server withdrew the request (turn cancelled or timed out): close the dialog.
            result.whenComplete((r, e) -> {
                if (result.isCancelled()) onEdt(() -> dialog.close(PermissionDialog.CANCEL_EXIT_CODE));
            });
            dialog.show();
            result.complete(Interactions.permissionResult(dialog.chosen()));
        });
        return result;
    }

    private void ask(List<Wire.Question> questions, List<Answer> answers, CompletableFuture<Wire.AskQuestionResult> result) {
        if (result.isDone() || project.isDisposed()) return;
        int index = answers.size();
        if (index == questions.size()) {
            result.complete(Interactions.result(questions, answers));
            return;
        }
        Wire.Question question = questions.get(index);
        String title = Interactions.title(question, index, questions.size());
        Consumer<Answer> next = answer -> {
            if (answer == null) {
                result.complete(Interactions.result(questions, answers));
                return;
            }
            answers.add(answer);
            ask(questions, answers, result);
        };
        JBPopup popup = question.multiSelect() ? checkboxes(question, title, next) : chooser(question, title, next);
        result.whenComplete((r, e) -> {
            if (result.isCancelled()) onEdt(popup::cancel);
        });
        popup.showCenteredInCurrentWindow(project);
    }

    /** One pick from the options, or Other… for typed text. */
    private JBPopup chooser(Wire.Question question, String title, Consumer<Answer> next) {
        List<String> items = new ArrayList<>();
        question.options().forEach(o -> items.add(o.label()));
        items.add(Interactions.OTHER);
        boolean[] picked = {false};
        JBPopup popup = JBPopupFactory.getInstance().createPopupChooserBuilder(items)
                .setTitle(title)
                .setAdText(Interactions.hint(question))
                .setRenderer(SimpleListCellRenderer.create("", label -> describe(question, label)))
                .setMovable(true)
                .setResizable(true)
                .setRequestFocus(true)
                .setItemChosenCallback(label -> {
                    picked[0] = true;
                    if (Interactions.OTHER.equals(label)) {
                        onEdt(() -> {
                            String typed = Messages.showInputDialog(project, question.question(), title, null);
                            next.accept(typed == null ? null : Interactions.answer(question, List.of(), typed));
                        });
                    } else {
                        next.accept(Interactions.answer(question, List.of(label), null));
                    }
                })
                .createPopup();
        popup.addListener(declineWhenClosed(() -> picked[0], next));
        return popup;
    }

    /** Any number of ticks, plus Other… with a text field; OK answers. */
    private JBPopup checkboxes(Wire.Question question, String title, Consumer<Answer> next) {
        JPanel panel = new JPanel();
        panel.setLayout(new BoxLayout(panel, BoxLayout.Y_AXIS));
        panel.setBorder(JBUI.Borders.empty(6, 8));
        List<JBCheckBox> boxes = new ArrayList<>();
        for (Wire.QuestionOption option : question.options()) {
            JBCheckBox box = new JBCheckBox(option.label());
            box.setToolTipText(option.description());
            boxes.add(box);
            panel.add(box);
        }
        JBCheckBox other = new JBCheckBox(Interactions.OTHER);
        JBTextField otherText = new JBTextField(24);
        otherText.addActionListener(e -> other.setSelected(true));
        otherText.addFocusListener(new FocusAdapter() {
            @Override
            public void focusGained(FocusEvent e) {
                other.setSelected(true);
            }
        });
        panel.add(other);
        panel.add(otherText);
        JButton ok = new JButton("OK");
        panel.add(ok);
        JBPopup popup = JBPopupFactory.getInstance()
                .createComponentPopupBuilder(panel, boxes.isEmpty() ? otherText : boxes.get(0))
                .setTitle(title)
                .setAdText(Interactions.hint(question))
                .setMovable(true)
                .setResizable(true)
                .setRequestFocus(true)
                .setCancelOnClickOutside(false)
                .createPopup();
        boolean[] answered = {false};
        ok.addActionListener(e -> {
            List<String> ticked = boxes.stream().filter(JBCheckBox::isSelected).map(JBCheckBox::getText).toList();
            Answer answer = Interactions.answer(question, ticked, other.isSelected() ? otherText.getText() : null);
            if (answer == null) {
                otherText.requestFocusInWindow();
                return;
            }
            answered[0] = true;
            popup.closeOk(null);
            next.accept(answer);
        });
        popup.addListener(declineWhenClosed(() -> answered[0], next));
        return popup;
    }

    /** Closed without a pick (Esc, click outside, the server withdrew it): decline. */
    private static JBPopupListener declineWhenClosed(BooleanSupplier answered, Consumer<Answer> next) {
        return new JBPopupListener() {
            @Override
            public void onClosed(@NotNull LightweightWindowEvent event) {
                // A chooser runs its pick callback after closing with isOk(), so that counts too.
                if (!event.isOk() && !answered.getAsBoolean()) next.accept(null);
            }
        };
    }

    private static String describe(Wire.Question question, String label) {
        return question.options().stream()
                .filter(o -> o.label().equals(label) && o.description() != null)
                .findFirst()
                .map(o -> label + " — " + o.description())
                .orElse(label);
    }

    private static void onEdt(Runnable runnable) {
        ApplicationManager.getApplication().invokeLater(runnable, ModalityState.any());
    }
}
