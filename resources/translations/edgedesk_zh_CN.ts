<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AnswerFooter</name>
    <message>
        <location filename="../../desktop/ui/chat/answer_footer.py" line="45"/>
        <source>%1 prompt · 1 token</source>
        <translation>提示 %1 · 生成 1 个词元</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/answer_footer.py" line="47"/>
        <source>%1 prompt · %2 tokens</source>
        <translation>提示 %1 · 生成 %2 个词元</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/answer_footer.py" line="54"/>
        <source>%1 tok/s</source>
        <translation>%1 词元/秒</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/answer_footer.py" line="61"/>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/answer_footer.py" line="63"/>
        <source>hit the token limit</source>
        <translation>已达词元上限</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/answer_footer.py" line="67"/>
        <source>broken off: %1</source>
        <translation>已中断：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/answer_footer.py" line="70"/>
        <source>broken off</source>
        <translation>已中断</translation>
    </message>
</context>
<context>
    <name>Attacher</name>
    <message>
        <location filename="../../desktop/ui/chat/attach.py" line="311"/>
        <source>Attach pictures or documents</source>
        <translation>附加图片或文档</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/attach.py" line="313"/>
        <source>Pictures and documents (%1);;All files (*)</source>
        <translation>图片和文档 (%1);;所有文件 (*)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/attach.py" line="363"/>
        <source>pasted picture %1.png</source>
        <translation>粘贴的图片 %1.png</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/attach.py" line="397"/>
        <source>%1 cannot see pictures: choose a vision model for this chat, or remove the picture before sending.</source>
        <translation>%1 无法识别图片：请为此对话选择视觉模型，或在发送前移除图片。</translation>
    </message>
</context>
<context>
    <name>AttachmentChip</name>
    <message>
        <location filename="../../desktop/ui/chat/attach.py" line="119"/>
        <location filename="../../desktop/ui/chat/attach.py" line="120"/>
        <source>Remove %1</source>
        <translation>移除 %1</translation>
    </message>
</context>
<context>
    <name>CatalogTableModel</name>
    <message>
        <location filename="../../desktop/ui/common/qmodels.py" line="61"/>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/qmodels.py" line="62"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/qmodels.py" line="63"/>
        <source>Tier</source>
        <translation>档位</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/qmodels.py" line="64"/>
        <source>Quant</source>
        <translation>量化</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/qmodels.py" line="65"/>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/qmodels.py" line="66"/>
        <source>Fit</source>
        <translation>适配</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/qmodels.py" line="67"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/qmodels.py" line="141"/>
        <source>installed</source>
        <translation>已安装</translation>
    </message>
</context>
<context>
    <name>ChatHeader</name>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="102"/>
        <source>Model for this chat</source>
        <translation>此对话使用的模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="103"/>
        <source>Choose a model…</source>
        <translation>选择模型…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="110"/>
        <source>Documents that ground the answers</source>
        <translation>用于支撑回答的文档</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="198"/>
        <source>On: the model may call the tools of %1. Off: no tools in this chat; other chats keep theirs.</source>
        <translation>开：模型可以调用 %1 的工具。关：此对话不使用工具；其他对话不受影响。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="309"/>
        <source>Answer from a document collection, with numbered citations</source>
        <translation>根据文档集回答，并附编号引用</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="116"/>
        <source>Temperature </source>
        <translation>温度 </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="117"/>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="119"/>
        <source>Ephemeral</source>
        <translation>临时</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="120"/>
        <source>Ephemeral chats are never saved to disk</source>
        <translation>临时对话永远不会保存到磁盘</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="121"/>
        <source>Ephemeral chat</source>
        <translation>临时对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="123"/>
        <source>Think</source>
        <translation>思考</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="126"/>
        <source>Let this reasoning model think before it answers; off, it answers at once (faster, less careful)</source>
        <translation>让推理模型先思考再回答；关闭后立即回答（更快，但不够周全）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="130"/>
        <source>Think before answering</source>
        <translation>回答前先思考</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="144"/>
        <source>Ephemeral chat: nothing of it is saved to disk; it is gone when EdgeDesk closes.</source>
        <translation>临时对话：不会保存到磁盘，关闭 EdgeDesk 后即消失。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="158"/>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="161"/>
        <source>Max tokens, top-p, top-k, min-p, repeat penalty and seed for this chat</source>
        <translation>此对话的最大词元数、top-p、top-k、min-p、重复惩罚和种子</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="163"/>
        <source>Show the sampling parameters</source>
        <translation>显示采样参数</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="175"/>
        <source>Offer the MCP tools in this chat</source>
        <translation>在此对话中提供 MCP 工具</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="185"/>
        <source>1 server</source>
        <translation>1 个服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="187"/>
        <source>%1 servers</source>
        <translation>%1 个服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="193"/>
        <source>1 tool</source>
        <translation>1 个工具</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="193"/>
        <source>%1 tools</source>
        <translation>%1 个工具</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="195"/>
        <source>Tools: %1</source>
        <translation>工具：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="207"/>
        <source>System prompt (optional)</source>
        <translation>系统提示词（可选）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="208"/>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="211"/>
        <source>System prompt presets</source>
        <translation>系统提示词预设</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="212"/>
        <source>Presets</source>
        <translation>预设</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="214"/>
        <source>Save preset…</source>
        <translation>保存预设…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="216"/>
        <source>Save this system prompt as a named preset</source>
        <translation>将此系统提示词保存为命名预设</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="288"/>
        <source>No documents</source>
        <translation>不使用文档</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="290"/>
        <source>Docs: </source>
        <translation>文档：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="313"/>
        <source>The document collection “%1” this chat used no longer exists; answers are not grounded in documents.</source>
        <translation>此对话使用的文档集“%1”已不存在；回答将不再基于文档。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="444"/>
        <source>Save preset</source>
        <translation>保存预设</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/header.py" line="444"/>
        <source>Name for this system prompt:</source>
        <translation>此系统提示词的名称：</translation>
    </message>
</context>
<context>
    <name>ChatNotice</name>
    <message>
        <location filename="../../desktop/ui/chat/notice.py" line="43"/>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/notice.py" line="44"/>
        <source>Download the embedding model</source>
        <translation>下载嵌入模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/notice.py" line="47"/>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/notice.py" line="91"/>
        <source>Undo: %1</source>
        <translation>撤销：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/notice.py" line="122"/>
        <source>The collection %1 needs the embedding model %2, which is not downloaded yet%3. Download it, then the answer follows.</source>
        <translation>文档集 %1 需要嵌入模型 %2，该模型尚未下载%3。下载后即会给出回答。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/notice.py" line="141"/>
        <source>Downloading %1…</source>
        <translation>正在下载 %1…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/notice.py" line="158"/>
        <source>The download of %1 is paused; Download resumes it.</source>
        <translation>%1 的下载已暂停；点击“下载”继续。</translation>
    </message>
    <message>
        <source>The collection %1 needs the embedding model %2, which is not downloaded.</source>
        <translation>文档集 %1 需要嵌入模型 %2，该模型尚未下载。</translation>
    </message>
</context>
<context>
    <name>ChatSidebar</name>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="73"/>
        <location filename="../../desktop/ui/chat/sidebar.py" line="74"/>
        <location filename="../../desktop/ui/chat/sidebar.py" line="158"/>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="75"/>
        <source>New chat (Ctrl+N)</source>
        <translation>新对话 (Ctrl+N)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="78"/>
        <location filename="../../desktop/ui/chat/sidebar.py" line="79"/>
        <source>Search chats</source>
        <translation>搜索对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="92"/>
        <source>Conversations</source>
        <translation>对话列表</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="99"/>
        <location filename="../../desktop/ui/chat/sidebar.py" line="145"/>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="101"/>
        <source>Delete chat</source>
        <translation>删除对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="103"/>
        <location filename="../../desktop/ui/chat/sidebar.py" line="143"/>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="104"/>
        <source>Export chat as Markdown or JSON</source>
        <translation>将对话导出为 Markdown 或 JSON</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="108"/>
        <source>Import chats from a JSON export…</source>
        <translation>从 JSON 导出文件导入对话…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="109"/>
        <source>Import chats from a JSON export</source>
        <translation>从 JSON 导出文件导入对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="142"/>
        <source>Rename…</source>
        <translation>重命名…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="156"/>
        <source>Rename chat</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="157"/>
        <source>Title:</source>
        <translation>标题：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="213"/>
        <source>Encrypted, opened with a passphrase (*%1)</source>
        <translation>加密，需密码短语打开 (*%1)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="252"/>
        <source>The chat was not exported: %1</source>
        <translation>对话未导出：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="271"/>
        <source>Encrypted export</source>
        <translation>加密导出</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="273"/>
        <source>Passphrase for this export (needed to import it):</source>
        <translation>此导出文件的密码短语（导入时需要）：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="275"/>
        <source>Passphrase of this encrypted export:</source>
        <translation>此加密导出文件的密码短语：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="282"/>
        <source>The same passphrase again:</source>
        <translation>再次输入相同的密码短语：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="287"/>
        <source>The two passphrases differ; nothing was exported.</source>
        <translation>两次输入的密码短语不一致；未导出任何内容。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="294"/>
        <source>Import chats</source>
        <translation>导入对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="296"/>
        <source>Chat exports (*.json *%1)</source>
        <translation>对话导出文件 (*.json *%1)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="316"/>
        <source>The file could not be read: %1</source>
        <translation>无法读取该文件：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="336"/>
        <source>Imported %1 chats.</source>
        <translation>已导入 %1 个对话。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="338"/>
        <source>Imported 1 chat.</source>
        <translation>已导入 1 个对话。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="216"/>
        <source>Export chat</source>
        <translation>导出对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/sidebar.py" line="208"/>
        <source>Nothing to export: this chat has no messages yet.</source>
        <translation>没有可导出的内容：此对话还没有消息。</translation>
    </message>
</context>
<context>
    <name>ChatView</name>
    <message>
        <location filename="../../desktop/ui/chat/view.py" line="354"/>
        <source>Delete chat</source>
        <translation>删除对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/view.py" line="356"/>
        <source>Delete “%1” and all its messages? Undo brings it back for a few seconds.</source>
        <translation>删除“%1”及其全部消息？几秒钟内可用“撤销”恢复。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/view.py" line="391"/>
        <source>Deleted “%1”.</source>
        <translation>已删除“%1”。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/view.py" line="446"/>
        <source>Still reading the attached files; send again in a moment.</source>
        <translation>仍在读取附加的文件，请稍后再发送。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/view.py" line="451"/>
        <source>Choose a model for this chat first (Models → Import or download one).</source>
        <translation>请先为此对话选择模型（模型 → 导入或下载）。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/view.py" line="512"/>
        <source>Editing a message: send to replace it and everything after it; Esc cancels.</source>
        <translation>正在编辑消息：发送后将替换该消息及其后的所有内容；按 Esc 取消。</translation>
    </message>
    <message>
        <source>Choose a model above to start (import or download one on the Models screen), then type your message below. Models on this device answer here: what you write stays on it.</source>
        <translation>请先在上方选择模型（可在“模型”页面导入或下载），然后在下方输入消息。本设备上的模型在此作答：你写的内容不会离开本设备。</translation>
    </message>
    <message>
        <source>Type your message below and press Ctrl+Enter. %1 answers from the remote engine %2: what you write leaves this device.</source>
        <translation>在下方输入消息并按 Ctrl+Enter。%1 由远程引擎 %2 作答：你写的内容会离开本设备。</translation>
    </message>
    <message>
        <source>Type your message below and press Ctrl+Enter. %1 answers on this device: what you write stays on it.</source>
        <translation>在下方输入消息并按 Ctrl+Enter。%1 在本设备上作答：你写的内容不会离开本设备。</translation>
    </message>
</context>
<context>
    <name>CitationRow</name>
    <message>
        <location filename="../../desktop/ui/chat/citations.py" line="58"/>
        <source>Sources:</source>
        <translation>来源：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/citations.py" line="58"/>
        <source>Sources given (none cited):</source>
        <translation>提供的来源（未被引用）：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/citations.py" line="66"/>
        <source>Show source </source>
        <translation>显示来源 </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/citations.py" line="89"/>
        <source>The cited file is not on this computer any more: %1</source>
        <translation>引用的文件已不在这台电脑上：%1</translation>
    </message>
</context>
<context>
    <name>Clipboard</name>
    <message>
        <location filename="../../desktop/ui/common/clipboard.py" line="17"/>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <location filename="../../desktop/ui/chat/composer.py" line="33"/>
        <source>Attach pictures or documents (or paste, or drop them on the chat)</source>
        <translation>附加图片或文档（也可粘贴，或拖放到对话中）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/composer.py" line="35"/>
        <source>Attach files</source>
        <translation>附加文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/composer.py" line="39"/>
        <source>Message the model — Ctrl+Enter to send</source>
        <translation>向模型发送消息 — Ctrl+Enter 发送</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/composer.py" line="40"/>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/composer.py" line="45"/>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/composer.py" line="47"/>
        <source>Send message</source>
        <translation>发送消息</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/composer.py" line="48"/>
        <source>Send (Ctrl+Enter)</source>
        <translation>发送 (Ctrl+Enter)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/composer.py" line="50"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/composer.py" line="51"/>
        <source>Stop generating</source>
        <translation>停止生成</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/composer.py" line="52"/>
        <source>Stop (Esc)</source>
        <translation>停止 (Esc)</translation>
    </message>
    <message>
        <source>Choose a model for this chat first: in the box above, or import or download one on the Models screen.</source>
        <translation>请先为此对话选择模型：在上方的下拉框中选择，或在“模型”页面导入或下载一个。</translation>
    </message>
</context>
<context>
    <name>ConversationListModel</name>
    <message>
        <location filename="../../desktop/ui/common/qmodels.py" line="173"/>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
</context>
<context>
    <name>CoreText</name>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="20"/>
        <source>fits on GPU</source>
        <translation>适合 GPU</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="21"/>
        <source>fits in RAM, slower</source>
        <translation>内存可容纳，较慢</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="22"/>
        <source>fits in RAM, slower (CPU)</source>
        <translation>内存可容纳，较慢（CPU）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="23"/>
        <source>won&apos;t fit</source>
        <translation>无法运行</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="26"/>
        <source>chat</source>
        <translation>聊天</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="27"/>
        <source>embedding</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="28"/>
        <source>reranker</source>
        <translation>重排序</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="31"/>
        <source>laptop</source>
        <translation>笔记本</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="32"/>
        <source>desktop</source>
        <translation>台式机</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="33"/>
        <source>workstation</source>
        <translation>工作站</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="34"/>
        <source>local</source>
        <translation>本地</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="35"/>
        <source>hub</source>
        <translation>模型库</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="36"/>
        <source>remote</source>
        <translation>远程</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="67"/>
        <source>RAM %1 free of %2</source>
        <translation>内存可用 %1（共 %2）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="75"/>
        <source>%1 %2 free of %3</source>
        <translation>%1 可用 %2（共 %3）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="90"/>
        <source>line %1</source>
        <translation>第 %1 行</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="92"/>
        <source>lines %1-%2</source>
        <translation>第 %1–%2 行</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="98"/>
        <source>p. %1, %2</source>
        <translation>第 %1 页，%2</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="109"/>
        <source>unsupported file type &apos;%1&apos;</source>
        <translation>不支持的文件类型“%1”</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="112"/>
        <source>too large (%1; the limit is %2)</source>
        <translation>文件过大（%1；上限为 %2）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="116"/>
        <source>too large when unpacked (%1; the limit is %2)</source>
        <translation>解压后过大（%1；上限为 %2）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="118"/>
        <source>empty file</source>
        <translation>空文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="119"/>
        <source>cannot read (%1)</source>
        <translation>无法读取（%1）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="122"/>
        <source>no text found (a scanned PDF?)</source>
        <translation>未找到文字（可能是扫描版 PDF？）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="124"/>
        <source>no text found</source>
        <translation>未找到文字</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="125"/>
        <source>binary file, not text</source>
        <translation>二进制文件，不是文本</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="126"/>
        <source>not UTF-8 text</source>
        <translation>不是 UTF-8 文本</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="129"/>
        <source>encrypted PDF (needs a password)</source>
        <translation>加密的 PDF（需要密码）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="133"/>
        <source>encrypted PDF (unsupported encryption)</source>
        <translation>加密的 PDF（不支持的加密方式）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="135"/>
        <source>not a readable PDF (%1)</source>
        <translation>无法读取的 PDF（%1）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="136"/>
        <source>not a readable DOCX (%1)</source>
        <translation>无法读取的 DOCX（%1）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="70"/>
        <source>%1 CPU threads</source>
        <translation>%1 个 CPU 线程</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="82"/>
        <source>no GPU detected</source>
        <translation>未检测到 GPU</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/core_text.py" line="83"/>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>CPU only</source>
        <translation>仅 CPU</translation>
    </message>
    <message>
        <source>%1/%2 layers on %3</source>
        <translation>%3 上 %1/%2 层</translation>
    </message>
    <message>
        <source>, %1 on the CPU</source>
        <translation>，%1 层在 CPU 上</translation>
    </message>
</context>
<context>
    <name>DataLocationRow</name>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="43"/>
        <source>Data location</source>
        <translation>数据位置</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="46"/>
        <source>Change…</source>
        <translation>更改…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="47"/>
        <source>Choose a new data folder</source>
        <translation>选择新的数据文件夹</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="50"/>
        <source>Move chats, document indexes, API keys and downloaded models to another folder</source>
        <translation>将对话、文档索引、API 密钥和已下载的模型移到另一个文件夹</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="54"/>
        <source>Keep here</source>
        <translation>保留在此处</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="55"/>
        <source>Cancel the data move</source>
        <translation>取消数据迁移</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="60"/>
        <location filename="../../desktop/ui/settings/data_location.py" line="72"/>
        <source>set by your organization</source>
        <translation>由您的组织设置</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="109"/>
        <source>Your data moves to {0} when EdgeDesk next starts.</source>
        <translation>下次启动 EdgeDesk 时，您的数据将移至 {0}。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="113"/>
        <source>EdgeDesk switches to {0} (nothing is copied) when it next starts.</source>
        <translation>下次启动时 EdgeDesk 将改用 {0}（不复制任何内容）。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="122"/>
        <source>Choose a folder for your data</source>
        <translation>为您的数据选择文件夹</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="129"/>
        <source>Change data location</source>
        <translation>更改数据位置</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="130"/>
        <source>Move your chats, document indexes, API keys and models ({0}) to {1}?</source>
        <translation>将您的对话、文档索引、API 密钥和模型（{0}）移至 {1}？</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="135"/>
        <source>Move my data</source>
        <translation>迁移我的数据</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="136"/>
        <source>Use the folder as it is</source>
        <translation>按原样使用该文件夹</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/data_location.py" line="143"/>
        <source>Cannot use this folder</source>
        <translation>无法使用此文件夹</translation>
    </message>
</context>
<context>
    <name>DateAxis</name>
    <message>
        <location filename="../../desktop/ui/server/date_axis.py" line="36"/>
        <source>en_US</source>
        <translation>zh_CN</translation>
    </message>
</context>
<context>
    <name>DocumentsView</name>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="100"/>
        <source>Documents</source>
        <translation>文档</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="113"/>
        <source>Indexing progress</source>
        <translation>索引进度</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="117"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="118"/>
        <source>Cancel indexing</source>
        <translation>取消索引</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="121"/>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="122"/>
        <source>Download the embedding model, then index</source>
        <translation>下载嵌入模型，然后建立索引</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="151"/>
        <source>Document collections</source>
        <translation>文档集</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="153"/>
        <source>New collection…</source>
        <translation>新建文档集…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="154"/>
        <source>Create a document collection</source>
        <translation>创建文档集</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="156"/>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="158"/>
        <source>Remove the collection&apos;s index (your files are kept)</source>
        <translation>移除该文档集的索引（保留您的文件）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="175"/>
        <source>Folders and files in this collection</source>
        <translation>此文档集中的文件夹和文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="177"/>
        <source>Skipped files and why</source>
        <translation>跳过的文件及原因</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="178"/>
        <source>Skipped file</source>
        <translation>跳过的文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="178"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="181"/>
        <source>Add folder…</source>
        <translation>添加文件夹…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="182"/>
        <source>Add a folder to the collection</source>
        <translation>向文档集添加文件夹</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="184"/>
        <source>Add files…</source>
        <translation>添加文件…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="185"/>
        <source>Add files to the collection</source>
        <translation>向文档集添加文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="187"/>
        <source>Re-index</source>
        <translation>重新索引</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="189"/>
        <source>Re-index the collection (only changed files are read)</source>
        <translation>重新索引文档集（只读取有变化的文件）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="203"/>
        <source>Sources</source>
        <translation>来源</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="205"/>
        <source>Skipped</source>
        <translation>已跳过</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="254"/>
        <location filename="../../desktop/ui/documents/view.py" line="346"/>
        <source>New collections are embedded with </source>
        <translation>新文档集使用的嵌入模型：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="301"/>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="332"/>
        <source>… and %1 more files</source>
        <translation>……另有 %1 个文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="350"/>
        <source>No embedding model is on this device yet: a new collection downloads %1 (%2) first.</source>
        <translation>此设备上还没有嵌入模型：新建文档集时会先下载 %1（%2）。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="349"/>
        <source>No embedding model is on this device, and downloads are off here: import one on the Models screen.</source>
        <translation>此设备上没有嵌入模型，且此处已关闭下载：请在“模型”页面导入一个。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="357"/>
        <source>No embedding model is available: import one on the Models screen.</source>
        <translation>没有可用的嵌入模型：请在“模型”页面导入一个。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="363"/>
        <source>1 document</source>
        <translation>1 个文档</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="365"/>
        <source>%1 documents</source>
        <translation>%1 个文档</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="370"/>
        <source>1 chunk</source>
        <translation>1 个片段</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="370"/>
        <source>%1 chunks</source>
        <translation>%1 个片段</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="292"/>
        <source>Create a collection, then add folders or files to ask questions about them in a chat.</source>
        <translation>创建文档集，然后添加文件夹或文件，即可在对话中就其内容提问。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="304"/>
        <source>embedding model: </source>
        <translation>嵌入模型：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="388"/>
        <location filename="../../desktop/ui/documents/view.py" line="396"/>
        <source>Add a folder</source>
        <translation>添加文件夹</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="406"/>
        <source>Add files</source>
        <translation>添加文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="408"/>
        <source>Documents (*.pdf *.docx *.txt *.md *.html *.htm *.csv *.json);;All files (*)</source>
        <translation>文档 (*.pdf *.docx *.txt *.md *.html *.htm *.csv *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="430"/>
        <source>Removed the index of </source>
        <translation>已移除索引：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="430"/>
        <source> (your files are untouched)</source>
        <translation>（您的文件未被改动）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="464"/>
        <source>%1 understands English only, and these documents have Chinese names or text: searches will miss much of them. For Chinese documents, make a collection with %2 (multilingual) on New collection…</source>
        <translation>%1 只懂英文，而这些文档的名称或内容含有中文：搜索会漏掉其中很多内容。中文文档请用“新建文档集…”创建一个使用 %2（多语言）的文档集。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="495"/>
        <source>Wait for the current indexing to finish, or cancel it.</source>
        <translation>请等待当前索引完成，或取消它。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="506"/>
        <source>Indexing </source>
        <translation>正在索引 </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="515"/>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="521"/>
        <source>%1: waiting for another indexing of this collection to finish…</source>
        <translation>%1：正在等待此集合的另一次索引完成…</translation>
    </message>
    <message numerus="yes">
        <location filename="../../desktop/ui/documents/view.py" line="534"/>
        <source>%n added</source>
        <translation>
            <numerusform>新增 %n</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../../desktop/ui/documents/view.py" line="536"/>
        <source>%n updated</source>
        <translation>
            <numerusform>更新 %n</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../../desktop/ui/documents/view.py" line="538"/>
        <source>%n unchanged</source>
        <translation>
            <numerusform>未变 %n</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../../desktop/ui/documents/view.py" line="540"/>
        <source>%n removed</source>
        <translation>
            <numerusform>移除 %n</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../../desktop/ui/documents/view.py" line="542"/>
        <source>%n skipped</source>
        <translation>
            <numerusform>跳过 %n</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/view.py" line="545"/>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
</context>
<context>
    <name>EmbeddingDownload</name>
    <message>
        <location filename="../../desktop/ui/documents/embedding_download.py" line="95"/>
        <source>%1 needs the embedding model %2: download it on the Models screen first.</source>
        <translation>%1 需要嵌入模型 %2：请先在“模型”页面下载。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/embedding_download.py" line="104"/>
        <source>%1 needs the embedding model %2, which is not downloaded yet (%3). Download it, then the indexing starts.</source>
        <translation>%1 需要嵌入模型 %2，该模型尚未下载（%3）。下载后将开始建立索引。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/embedding_download.py" line="136"/>
        <source>Downloading </source>
        <translation>正在下载 </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/embedding_download.py" line="142"/>
        <source>downloading the embedding model</source>
        <translation>正在下载嵌入模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/embedding_download.py" line="157"/>
        <source>The download of %1 is paused; Download resumes it.</source>
        <translation>%1 的下载已暂停；点击“下载”继续。</translation>
    </message>
    <message>
        <source>%1 needs the embedding model %2, which is not downloaded.</source>
        <translation>%1 需要嵌入模型 %2，该模型尚未下载。</translation>
    </message>
</context>
<context>
    <name>EncryptionSwitch</name>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="94"/>
        <location filename="../../desktop/ui/settings/encryption.py" line="96"/>
        <source>Encrypt my data at rest</source>
        <translation>加密保存我的数据</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="99"/>
        <source>your passphrase</source>
        <translation>您的密码短语</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="101"/>
        <source>the OS keyring</source>
        <translation>系统密钥环</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="104"/>
        <source>Encrypted (%1); the key is in %2.</source>
        <translation>已加密（%1）；密钥保存在%2中。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="110"/>
        <source>Not encrypted: conversations and document indexes are plain files, readable by anyone who gets a copy.</source>
        <translation>未加密：对话和文档索引是普通文件，任何拿到副本的人都能读取。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="117"/>
        <source>Passphrase (optional: instead of the OS keyring)</source>
        <translation>密码短语（可选：代替系统密钥环）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="117"/>
        <source>Passphrase</source>
        <translation>密码短语</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="142"/>
        <source>Your organization requires encrypted data (policy EncryptAtRest): it cannot be turned off.</source>
        <translation>您的组织要求数据加密（策略 EncryptAtRest）：无法关闭。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="121"/>
        <source>Passphrase again</source>
        <translation>再次输入密码短语</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="129"/>
        <source>Back up the key…</source>
        <translation>备份密钥…</translation>
    </message>
</context>
<context>
    <name>ErrorText</name>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="41"/>
        <source>Cannot connect: EdgeDesk is offline, so it makes no network connection. To go online, untick “Offline” in Settings (Network).</source>
        <translation>无法连接：EdgeDesk 处于离线模式，不会建立任何网络连接。要联网，请在“设置”（网络）中取消勾选“离线”。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="49"/>
        <source>Cannot download: model downloads are turned off on this computer. Import a .gguf file you already have on the Models screen instead.</source>
        <translation>无法下载：此电脑已关闭模型下载。请改为在“模型”页面导入已有的 .gguf 文件。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="57"/>
        <source>Not enough free disk space in %1: the download needs %2 (+%3 headroom), only %4 is free.</source>
        <translation>%1 的磁盘空间不足：下载需要 %2（另需 %3 余量），但只剩 %4 可用。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="65"/>
        <source>%1 is still being downloaded (another window or a terminal); stop that download first.</source>
        <translation>%1 仍在下载中（另一个窗口或终端）；请先停止该下载。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="73"/>
        <source>The download of %1 from %2 gave up after %3 tries; what came is kept, download again to resume.</source>
        <translation>从 %2 下载 %1 在尝试 %3 次后放弃；已下载的部分已保留，再次下载即可续传。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="81"/>
        <source>%1 from %2 arrived corrupt and was moved aside to %3; download it again.</source>
        <translation>来自 %2 的 %1 已损坏，已移至 %3；请重新下载。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="87"/>
        <source>%1 refused access to %2 (%3): sign in with a Hugging Face token first.</source>
        <translation>%1 拒绝访问 %2（%3）：请先使用 Hugging Face 令牌登录。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="93"/>
        <source>%1 answered %2 for %3; try again later.</source>
        <translation>%1 对 %3 返回了 %2；请稍后再试。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="97"/>
        <source>Cannot reach %1; check the network connection and try again.</source>
        <translation>无法连接 %1；请检查网络连接后重试。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="103"/>
        <source>%1 is blocked by your organization&apos;s policy (AllowedModels); ask IT to allow it or pick an allowed model.</source>
        <translation>%1 被贵组织的策略（AllowedModels）禁止；请联系 IT 放行，或选择允许的模型。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="111"/>
        <source>%1 cannot see pictures (it has no vision projector); choose a vision model for this chat, or remove the picture.</source>
        <translation>%1 看不到图片（它没有视觉投影器）；请为此对话选择视觉模型，或移除图片。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="119"/>
        <source>There is no model called %1; the Models screen lists them.</source>
        <translation>没有名为 %1 的模型；可在“模型”页面查看所有模型。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="125"/>
        <source>%1 is not installed; the Models screen lists what is.</source>
        <translation>%1 尚未安装；可在“模型”页面查看已安装的模型。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="129"/>
        <source>%1 is not downloaded yet; download it on the Models screen first.</source>
        <translation>%1 尚未下载；请先在“模型”页面下载。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="134"/>
        <source>Model file not found: %1</source>
        <translation>找不到模型文件：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="136"/>
        <source>“%1” is not a complete model file: it is damaged or only partly downloaded. Download it again (or copy it again from where it came from), then import it.</source>
        <translation>“%1”不是完整的模型文件：它已损坏或只下载了一部分。请重新下载（或从原处重新复制），然后再导入。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="144"/>
        <source>“%1” is not a model EdgeDesk can run: it is not a GGUF file. Choose a file ending in .gguf (the Models screen can download one).</source>
        <translation>“%1”不是 EdgeDesk 能运行的模型：它不是 GGUF 文件。请选择以 .gguf 结尾的文件（“模型”页面可以下载）。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="152"/>
        <source>The model stopped unexpectedly (%1) and is reloading; send your message again. EdgeDesk and your other chats were not affected.</source>
        <translation>模型意外停止（%1），正在重新加载；请再次发送您的消息。EdgeDesk 和您的其他对话未受影响。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="176"/>
        <source>This chat is too long for the model: %1 tokens, and it reads at most %2. Start a new chat, or shorten or remove a long message or attachment.</source>
        <translation>此对话对该模型来说太长：共 %1 个词元，而模型最多读取 %2 个。请新建对话，或缩短、删除较长的消息或附件。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="184"/>
        <source>This chat is far too long for the model: about %1 tokens, and it reads at most %2. Start a new chat, or shorten or remove the long message or attachment.</source>
        <translation>此对话对该模型来说过长：约 %1 个词元，而模型最多读取 %2 个。请新建对话，或缩短、删除那条很长的消息或附件。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="160"/>
        <source>The model %1 crashed while loading (%2); EdgeDesk was not affected. The file may be damaged or made for another version of llama.cpp.</source>
        <translation>模型 %1 在加载时崩溃（%2）；EdgeDesk 未受影响。该文件可能已损坏，或是为其他版本的 llama.cpp 制作的。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="168"/>
        <source>%1 crashed every time it loaded (%2), so it is not loaded again. Fix or replace the file, then press Retry on the Models screen.</source>
        <translation>%1 每次加载都崩溃（%2），因此不再加载。请修复或替换该文件，然后在“模型”页面按“重试”。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="196"/>
        <source>The model could not be loaded</source>
        <translation>无法加载模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="197"/>
        <source>The model file cannot be used</source>
        <translation>模型文件无法使用</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="198"/>
        <source>The model has no chat template</source>
        <translation>该模型没有对话模板</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="199"/>
        <source>The model&apos;s chat template failed</source>
        <translation>模型的对话模板出错</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="202"/>
        <source>The conversation is too long for this model</source>
        <translation>对话太长，超出了该模型的上下文</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="204"/>
        <source>The model is busy</source>
        <translation>模型正忙</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="205"/>
        <source>The remote model failed</source>
        <translation>远程模型出错</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="206"/>
        <source>Your organization&apos;s policy blocks this</source>
        <translation>贵组织的策略禁止此操作</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="207"/>
        <source>Model not found</source>
        <translation>找不到模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="208"/>
        <source>No network connection is allowed</source>
        <translation>不允许任何网络连接</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="209"/>
        <source>The download failed</source>
        <translation>下载失败</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="210"/>
        <source>A Hugging Face sign-in is needed</source>
        <translation>需要登录 Hugging Face</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="211"/>
        <source>Your saved data could not be read or written</source>
        <translation>无法读取或写入已保存的数据</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="212"/>
        <source>A setting is not valid</source>
        <translation>某项设置无效</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="213"/>
        <source>This cannot be done</source>
        <translation>无法执行此操作</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="225"/>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="235"/>
        <source>unexpected error: %1</source>
        <translation>意外错误：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/common/error_text.py" line="249"/>
        <source>llama.cpp&apos;s last words:</source>
        <translation>llama.cpp 的最后输出：</translation>
    </message>
</context>
<context>
    <name>ExpertsBox</name>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="75"/>
        <source>Auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="76"/>
        <source>All in RAM</source>
        <translation>全部放在内存</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="77"/>
        <source>On GPU</source>
        <translation>放在 GPU 上</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="78"/>
        <source>First N layers in RAM</source>
        <translation>前 N 层放在内存</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="81"/>
        <source>Where this mixture-of-experts model keeps its experts: Auto fits as many on the GPU as there is room for; All in RAM leaves the GPU to attention and the KV cache; On GPU places whole layers; or the experts of the first N layers in RAM. Another choice reloads the model.</source>
        <translation>此混合专家模型的专家放在哪里：自动——GPU 放得下多少就放多少；全部放在内存——GPU 只留给注意力层和 KV 缓存；放在 GPU 上——按整层放置；或把前 N 层的专家放在内存。更改选择会重新加载模型。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="90"/>
        <source>Layers whose experts stay in RAM</source>
        <translation>专家留在内存中的层数</translation>
    </message>
</context>
<context>
    <name>FirstRunDialog</name>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="91"/>
        <source>Welcome to EdgeDesk</source>
        <translation>欢迎使用 EdgeDesk</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="94"/>
        <source>Let&apos;s get a model onto this machine</source>
        <translation>先为这台电脑准备一个模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="100"/>
        <source>This machine: </source>
        <translation>本机：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="110"/>
        <source>Download progress</source>
        <translation>下载进度</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="125"/>
        <source>Skip</source>
        <translation>跳过</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="126"/>
        <source>Skip setup (choose a model later)</source>
        <translation>跳过设置（稍后再选模型）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="128"/>
        <source>Download and start</source>
        <translation>下载并开始</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="130"/>
        <source>Download the recommended model</source>
        <translation>下载推荐的模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="132"/>
        <source>Import a file I have…</source>
        <translation>导入已有的文件…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="133"/>
        <source>Import a GGUF model file from this computer</source>
        <translation>从此电脑导入 GGUF 模型文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="145"/>
        <source>Importing </source>
        <translation>正在导入 </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="162"/>
        <source>No catalog model fits this machine. Import a GGUF file on the Models screen instead.</source>
        <translation>目录中没有适合本机的模型。请在“模型”页面导入 GGUF 文件。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="170"/>
        <source>Recommended: </source>
        <translation>推荐：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="180"/>
        <source>Starting the download…</source>
        <translation>正在开始下载…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="210"/>
        <source>Installed and verified: </source>
        <translation>已安装并校验：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="221"/>
        <source>Resume download</source>
        <translation>继续下载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/first_run.py" line="159"/>
        <source>%1 cannot chat (an embedding model, say). Import a chat model, or download the recommended one.</source>
        <translation>%1 不能用于对话（例如嵌入模型）。请导入一个对话模型，或下载推荐的模型。</translation>
    </message>
</context>
<context>
    <name>HardwarePanel</name>
    <message>
        <location filename="../../desktop/ui/settings/hardware_panel.py" line="23"/>
        <source>Hardware and GPU</source>
        <translation>硬件与 GPU</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_panel.py" line="26"/>
        <source>Hardware and GPU report</source>
        <translation>硬件与 GPU 报告</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_panel.py" line="30"/>
        <source>Checking this machine…</source>
        <translation>正在检查本机…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_panel.py" line="46"/>
        <source>Could not read the hardware: {0}</source>
        <translation>无法读取硬件信息：{0}</translation>
    </message>
</context>
<context>
    <name>HardwareReport</name>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="23"/>
        <source>This llama-cpp-python was built for the CPU only. Reinstall with ./scripts/install.sh (it detects the GPU; EDGEDESK_GPU=cuda|vulkan|metal forces one) to use a GPU.</source>
        <translation>此 llama-cpp-python 仅为 CPU 构建。要使用 GPU，请用 ./scripts/install.sh 重新安装（它会检测 GPU；EDGEDESK_GPU=cuda|vulkan|metal 可强制指定）。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="29"/>
        <source>The Vulkan backend found no device. Install the GPU&apos;s Vulkan driver (Mesa RADV/ANV, NVIDIA, AMD). Software devices such as llvmpipe/lavapipe are skipped unless GGML_VK_VISIBLE_DEVICES selects them.</source>
        <translation>Vulkan 后端未找到设备。请安装显卡的 Vulkan 驱动（Mesa RADV/ANV、NVIDIA、AMD）。llvmpipe/lavapipe 等软件设备会被跳过，除非 GGML_VK_VISIBLE_DEVICES 选中它们。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="35"/>
        <source>The Vulkan backend found no device. GGML_VK_VISIBLE_DEVICES=%1 selected no usable device.</source>
        <translation>Vulkan 后端未找到设备。GGML_VK_VISIBLE_DEVICES=%1 未选中任何可用设备。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="39"/>
        <source>The CUDA backend found no device: install or update the NVIDIA driver (nvidia-smi must list the GPU), or check CUDA_VISIBLE_DEVICES.</source>
        <translation>CUDA 后端未找到设备：请安装或更新 NVIDIA 驱动（nvidia-smi 须能列出该 GPU），或检查 CUDA_VISIBLE_DEVICES。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="44"/>
        <source>The Metal backend found no device (Apple Silicon or a Metal GPU is needed).</source>
        <translation>Metal 后端未找到设备（需要 Apple 芯片或支持 Metal 的 GPU）。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="48"/>
        <source>The %1 backend found no device: check its driver/runtime.</source>
        <translation>%1 后端未找到设备：请检查其驱动或运行时。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="51"/>
        <source>gpu_layers = 0 in settings keeps every layer on the CPU; remove it for automatic.</source>
        <translation>设置中的 gpu_layers = 0 让所有层都留在 CPU 上；删除该项即可自动分配。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="71"/>
        <source> (GPU present but unused: %1.)</source>
        <translation>（有 GPU 但未使用：%1。）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="94"/>
        <source>needs ~%1 at context %2</source>
        <translation>上下文为 %2 时约需 %1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="99"/>
        <source>all %1 layers on the GPU</source>
        <translation>全部 %1 层在 GPU 上</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="104"/>
        <source>%1/%2 layers on the GPU, rest on CPU</source>
        <translation>%1/%2 层在 GPU 上，其余在 CPU 上</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="109"/>
        <source>runs on the CPU (no GPU memory free)</source>
        <translation>在 CPU 上运行（GPU 无空闲显存）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="111"/>
        <source>runs on the CPU (no GPU offload in this build)</source>
        <translation>在 CPU 上运行（此构建不支持 GPU 加速）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="122"/>
        <source>absent</source>
        <translation>无</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="123"/>
        <source>usable</source>
        <translation>可用</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="124"/>
        <source>listed, not usable</source>
        <translation>已列出，但不可用</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="125"/>
        <source>listed, not checked</source>
        <translation>已列出，未检验</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="127"/>
        <source>no extension (generic)</source>
        <translation>无扩展指令（通用）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="132"/>
        <source>none of them</source>
        <translation>都没有</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="134"/>
        <source>cpu:       llama.cpp built for %1</source>
        <translation>CPU：      llama.cpp 编译时启用 %1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="137"/>
        <source>           this CPU has %1; AMX: %2</source>
        <translation>           本机 CPU 支持 %1；AMX：%2</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="143"/>
        <source>           AMX probe: %1</source>
        <translation>           AMX 探测：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="149"/>
        <source>           llama.cpp&apos;s AMX kernels left out: they crash on this llama.cpp (EDGEDESK_AMX=1 ./scripts/install.sh builds them)</source>
        <translation>           未编入 llama.cpp 的 AMX 内核：在此版本的 llama.cpp 中会崩溃（EDGEDESK_AMX=1 ./scripts/install.sh 可编入）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="157"/>
        <source>  note: llama.cpp&apos;s AMX kernels are built in (EDGEDESK_AMX=1); on some machines they crash reading any prompt: if every model crashes, reinstall without EDGEDESK_AMX=1</source>
        <translation>  注意：已编入 llama.cpp 的 AMX 内核（EDGEDESK_AMX=1）；在某些机器上读取任何提示时都会崩溃：如果每个模型都崩溃，请不带 EDGEDESK_AMX=1 重新安装</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="166"/>
        <source>  warning: llama.cpp was built for %1, which this CPU cannot run: it would stop with SIGILL. Rebuild it for this machine with ./scripts/install.sh</source>
        <translation>  警告：llama.cpp 启用了本机 CPU 无法执行的 %1，运行时会因 SIGILL 中止。请用 ./scripts/install.sh 为本机重新编译</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="180"/>
        <source>%1 (GPU offload)</source>
        <translation>%1（GPU 加速）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="184"/>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="204"/>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="189"/>
        <source>backend:   %1  (compiled in: %2)</source>
        <translation>后端：    %1（编译支持：%2）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="192"/>
        <source>machine:   %1</source>
        <translation>本机：    %1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="195"/>
        <source>devices:</source>
        <translation>设备：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="199"/>
        <source>offload</source>
        <translation>可加速</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="201"/>
        <source>host</source>
        <translation>主机</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="207"/>
        <source>  %1 %2  [%3, %4]  %5 free of %6  driver: %7</source>
        <translation>  %1 %2  [%3，%4]  可用 %5（共 %6）  驱动：%7</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="219"/>
        <source>  (none reported)</source>
        <translation>  （未报告任何设备）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="222"/>
        <source>GPU:       used</source>
        <translation>GPU：      已使用</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="224"/>
        <source>GPU:       not used</source>
        <translation>GPU：      未使用</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="229"/>
        <source>  why:     %1</source>
        <translation>  原因：    %1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="231"/>
        <source>installed models:</source>
        <translation>已安装的模型：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="236"/>
        <source>unreadable</source>
        <translation>无法读取</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/hardware_report.py" line="243"/>
        <source>  (none; &apos;edgedesk models pull ID&apos; or &apos;edgedesk models import FILE&apos;)</source>
        <translation>  （无；请在“模型”页面下载或导入模型）</translation>
    </message>
</context>
<context>
    <name>HubSearch</name>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="68"/>
        <source>Search the Hub for GGUF models (e.g. glm-4)</source>
        <translation>在模型仓库中搜索 GGUF 模型（例如 glm-4）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="69"/>
        <source>Hub search</source>
        <translation>模型仓库搜索</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="71"/>
        <source>Search Hub</source>
        <translation>搜索模型仓库</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="72"/>
        <source>Search the model hub</source>
        <translation>搜索模型仓库</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="74"/>
        <source>Download quant</source>
        <translation>下载此量化版本</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="75"/>
        <source>Download the selected quant</source>
        <translation>下载所选的量化版本</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="77"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="78"/>
        <source>Cancel the Hub search</source>
        <translation>取消模型中心搜索</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="87"/>
        <source>Hub search results</source>
        <translation>模型仓库搜索结果</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="89"/>
        <source>Repository / quant</source>
        <translation>仓库 / 量化</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="89"/>
        <source>Downloads</source>
        <translation>下载次数</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="89"/>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="118"/>
        <source>Searching…</source>
        <translation>正在搜索…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="130"/>
        <source>Search cancelled.</source>
        <translation>已取消搜索。</translation>
    </message>
    <message numerus="yes">
        <location filename="../../desktop/ui/models/hub_search.py" line="154"/>
        <source>%n repositories found</source>
        <translation>
            <numerusform>找到 %n 个仓库</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/hub_search.py" line="163"/>
        <source>Choose a quant under a repository first.</source>
        <translation>请先在某个仓库下选择一个量化版本。</translation>
    </message>
    <message>
        <source>Search the Hub for GGUF repositories</source>
        <translation>在模型仓库中搜索 GGUF 仓库</translation>
    </message>
    <message>
        <source>Download the quant selected in the results</source>
        <translation>下载结果中所选的量化版本</translation>
    </message>
</context>
<context>
    <name>KeyBackupDialog</name>
    <message>
        <location filename="../../desktop/ui/settings/key_backup.py" line="56"/>
        <source>Back up your encryption key</source>
        <translation>备份您的加密密钥</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_backup.py" line="60"/>
        <source>Your conversations and documents are encrypted, and the key is kept only in this computer&apos;s keyring. If the keyring loses it (a new user account, a reset keyring, a reinstalled system), nothing can open your data again except a backup of the key. Keep one somewhere safe, off this computer.</source>
        <translation>您的对话和文档已加密，密钥只保存在这台电脑的密钥环中。如果密钥环丢失了它（新的用户账户、重置的密钥环、重装的系统），除了密钥的备份，没有任何办法能再打开您的数据。请把备份保存在这台电脑以外的安全地方。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_backup.py" line="67"/>
        <source>Save to a file…</source>
        <translation>保存到文件…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_backup.py" line="68"/>
        <source>Show a recovery code</source>
        <translation>显示恢复码</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_backup.py" line="76"/>
        <source>Recovery code</source>
        <translation>恢复码</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_backup.py" line="88"/>
        <source>Not now</source>
        <translation>以后再说</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_backup.py" line="110"/>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_backup.py" line="131"/>
        <source>Write this code down and keep it off this computer. If the key is ever lost, EdgeDesk asks for this code when it starts (&apos;edgedesk data import-key --code&apos; takes it back too).</source>
        <translation>请抄下此代码，并保存在这台电脑以外的地方。如果密钥丢失，EdgeDesk 启动时会要求输入此代码（也可用 &apos;edgedesk data import-key --code&apos; 恢复）。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_backup.py" line="163"/>
        <source>Saved to %1. Anyone with this file and your data can read it: move it off this computer (a password manager, a USB stick in a drawer). If the key is ever lost, EdgeDesk asks for this file when it starts (&apos;edgedesk data import-key FILE&apos; restores it too).</source>
        <translation>已保存到 %1。任何拿到此文件和你数据的人都能读取数据：请把它移出这台电脑（密码管理器、抽屉里的 U 盘）。如果密钥丢失，EdgeDesk 启动时会要求打开此文件（也可用 &apos;edgedesk data import-key FILE&apos; 恢复）。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_backup.py" line="141"/>
        <source>Save the encryption key</source>
        <translation>保存加密密钥</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_backup.py" line="158"/>
        <source>The key was not saved: %1</source>
        <translation>密钥未保存：%1</translation>
    </message>
</context>
<context>
    <name>KeyRestoreDialog</name>
    <message>
        <location filename="../../desktop/ui/settings/key_restore.py" line="43"/>
        <source>Restore your encryption key</source>
        <translation>恢复加密密钥</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_restore.py" line="47"/>
        <source>Your conversations and documents are encrypted, and this computer&apos;s keyring no longer has their key (a new user account or a reset keyring). Type the recovery code you wrote down, or open the key file you saved.</source>
        <translation>你的对话和文档已加密，而这台电脑的密钥环里已没有它们的密钥（新的用户帐户或重置过的密钥环）。请输入你抄下的恢复代码，或打开你保存的密钥文件。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_restore.py" line="59"/>
        <source>Recovery code</source>
        <translation>恢复代码</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_restore.py" line="60"/>
        <source>Open a key file…</source>
        <translation>打开密钥文件…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_restore.py" line="71"/>
        <source>Restore the key</source>
        <translation>恢复密钥</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_restore.py" line="88"/>
        <source>Open the key file</source>
        <translation>打开密钥文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_restore.py" line="95"/>
        <source>Cannot read %1: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/key_restore.py" line="102"/>
        <source>Type the recovery code first, or open the key file.</source>
        <translation>请先输入恢复代码，或打开密钥文件。</translation>
    </message>
</context>
<context>
    <name>KeyRows</name>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="38"/>
        <source>just now</source>
        <translation>刚刚</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="40"/>
        <source>%1 min ago</source>
        <translation>%1 分钟前</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="44"/>
        <source>%1 h ago</source>
        <translation>%1 小时前</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="48"/>
        <source>yesterday</source>
        <translation>昨天</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="50"/>
        <source>%1 days ago</source>
        <translation>%1 天前</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="61"/>
        <source>endpoints: %1</source>
        <translation>端点：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="67"/>
        <source>models: %1</source>
        <translation>模型：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="73"/>
        <source>reads documents of %1</source>
        <translation>可读取文档集 %1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="79"/>
        <source>%1 requests a minute</source>
        <translation>每分钟 %1 次请求</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="85"/>
        <source>expires %1</source>
        <translation>%1 到期</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="89"/>
        <source>any model, any endpoint</source>
        <translation>任意模型、任意端点</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="97"/>
        <source>made %1</source>
        <translation>创建于 %1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="101"/>
        <source>last used %1</source>
        <translation>上次使用 %1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="103"/>
        <source>never used</source>
        <translation>从未使用</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="107"/>
        <source>Made: %1</source>
        <translation>创建时间：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_rows.py" line="112"/>
        <source>Last used: %1</source>
        <translation>上次使用时间：%1</translation>
    </message>
</context>
<context>
    <name>KeyScopeDialog</name>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="72"/>
        <source>Edit the key&apos;s scope</source>
        <translation>编辑密钥的权限范围</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="72"/>
        <source>New API key</source>
        <translation>新建 API 密钥</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="77"/>
        <source>e.g. vscode</source>
        <translation>例如 vscode</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="78"/>
        <source>Name of the client</source>
        <translation>客户端名称</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="79"/>
        <source>Client name:</source>
        <translation>客户端名称：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="81"/>
        <source>Any model; or model ids, comma-separated</source>
        <translation>任意模型；或填写模型 ID，以逗号分隔</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="83"/>
        <source>Models the key may use</source>
        <translation>该密钥可使用的模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="84"/>
        <source>Models:</source>
        <translation>模型：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="86"/>
        <source>Chat</source>
        <translation>对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="87"/>
        <source>Embeddings</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="88"/>
        <source>Documents</source>
        <translation>文档</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="97"/>
        <source>Endpoints:</source>
        <translation>接口：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="100"/>
        <source>never</source>
        <translation>永不过期</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="101"/>
        <source> days</source>
        <translation> 天</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="102"/>
        <source>Expires after this many days</source>
        <translation>在这么多天后过期</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="109"/>
        <source>Expires in:</source>
        <translation>有效期：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="112"/>
        <source>no limit</source>
        <translation>不限</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="113"/>
        <source> per minute</source>
        <translation> 次/分钟</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="114"/>
        <source>Requests a minute</source>
        <translation>每分钟请求数</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="116"/>
        <source>Rate:</source>
        <translation>速率：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/key_scope.py" line="120"/>
        <source>Your organization limits API keys to %1 days.</source>
        <translation>贵组织将 API 密钥的有效期限制为 %1 天。</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="242"/>
        <source>Chats</source>
        <translation>聊天</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="243"/>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="244"/>
        <source>Documents</source>
        <translation>文档</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="245"/>
        <source>Server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="246"/>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="256"/>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="313"/>
        <source>Model: </source>
        <translation>模型：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="315"/>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="317"/>
        <source>No chat model loaded</source>
        <translation>未加载对话模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="319"/>
        <source>No model loaded</source>
        <translation>未加载模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="321"/>
        <source>Memory: </source>
        <translation>内存：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="323"/>
        <source>● Offline mode</source>
        <translation>● 离线模式</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="327"/>
        <source>No network connection will be made (Settings: Network)</source>
        <translation>不会建立任何网络连接（设置：网络）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="533"/>
        <source>Settings not saved</source>
        <translation>设置未保存</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="558"/>
        <location filename="../../desktop/ui/shell/main_window.py" line="579"/>
        <source>The new language shows the next time EdgeDesk starts.</source>
        <translation>新语言将在 EdgeDesk 下次启动时生效。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="562"/>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="564"/>
        <source>The new language shows after EdgeDesk restarts. Restart now? Answers being written are stopped; your chats are kept.</source>
        <translation>新语言在 EdgeDesk 重新启动后生效。现在重新启动吗？正在生成的回答会停止；你的对话都会保留。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="570"/>
        <source>Restart now</source>
        <translation>立即重新启动</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="571"/>
        <source>Later</source>
        <translation>稍后</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="608"/>
        <source>your passphrase</source>
        <translation>你的密码短语</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="610"/>
        <source>this computer&apos;s keyring</source>
        <translation>这台电脑的密钥环</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="613"/>
        <source>Your data is now encrypted; the key is in %1. Chats, documents and their indexes are unreadable without it.</source>
        <translation>你的数据现已加密；密钥保存在%1中。没有它，对话、文档及其索引都无法读取。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="618"/>
        <source>Your data is no longer encrypted: chats and document indexes are now plain files. Turn encryption on again in Settings at any time.</source>
        <translation>你的数据已不再加密：对话和文档索引现在是普通文件。可随时在设置中重新开启加密。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="626"/>
        <source>Encryption</source>
        <translation>加密</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="667"/>
        <source>The answer being written stops where it is.</source>
        <translation>正在生成的回答会停在当前位置。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="670"/>
        <source>The local API server at %1 stops: programs using it lose it.</source>
        <translation>位于 %1 的本地 API 服务器会停止：正在使用它的程序将无法再连接。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="678"/>
        <source>Quit EdgeDesk?</source>
        <translation>退出 EdgeDesk？</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="679"/>
        <source>Quitting EdgeDesk now:</source>
        <translation>现在退出 EdgeDesk：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="686"/>
        <source>To keep the server running with the window closed, tick &quot;Closing the window keeps the server running in the tray&quot; in Settings.</source>
        <translation>若要在关闭窗口后让服务器继续运行，请在设置中勾选“关闭窗口后服务器继续在托盘中运行”。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="691"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/main_window.py" line="726"/>
        <source>EdgeDesk cannot open this file: </source>
        <translation>EdgeDesk 无法打开此文件：</translation>
    </message>
</context>
<context>
    <name>MessageWidget</name>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="53"/>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="53"/>
        <source>Assistant</source>
        <translation>助手</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="96"/>
        <location filename="../../desktop/ui/chat/message.py" line="216"/>
        <source>▸ Reasoning</source>
        <translation>▸ 推理过程</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="97"/>
        <source>Show reasoning</source>
        <translation>显示推理过程</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="167"/>
        <location filename="../../desktop/ui/chat/message.py" line="178"/>
        <source>Message text</source>
        <translation>消息内容</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="76"/>
        <source>Copy message</source>
        <translation>复制消息</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="45"/>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="77"/>
        <source>Copy code</source>
        <translation>复制代码</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="78"/>
        <source>code</source>
        <translation>代码</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="81"/>
        <source>Edit and resend</source>
        <translation>编辑并重新发送</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="84"/>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="112"/>
        <source>Previous version</source>
        <translation>上一个版本</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="118"/>
        <source>Version %1 of %2</source>
        <translation>第 %1 版，共 %2 版</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="123"/>
        <source>Next version</source>
        <translation>下一个版本</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="216"/>
        <source>▾ Reasoning</source>
        <translation>▾ 推理过程</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/message.py" line="225"/>
        <source>{arrow} Tools ({n} calls)</source>
        <translation>{arrow} 工具（{n} 次调用）</translation>
    </message>
</context>
<context>
    <name>ModelDetailsDialog</name>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="42"/>
        <source>Model details: %1</source>
        <translation>模型详情：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="58"/>
        <location filename="../../desktop/ui/models/details.py" line="62"/>
        <source>Chat template</source>
        <translation>对话模板</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="64"/>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="78"/>
        <source>yes (projector %1)</source>
        <translation>是（投影器 %1）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="80"/>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="83"/>
        <source>none (runs on the CPU)</source>
        <translation>无（在 CPU 上运行）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="85"/>
        <source>all %1</source>
        <translation>全部 %1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="88"/>
        <source>%1 of %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="97"/>
        <source>%1 at %2 tokens (%3)</source>
        <translation>%1，%2 个词元（%3）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="104"/>
        <source>the GGUF file</source>
        <translation>GGUF 文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="106"/>
        <source>the catalog (models.toml)</source>
        <translation>模型目录（models.toml）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="108"/>
        <source>built in for %1</source>
        <translation>%1 的内置模板</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="110"/>
        <source>nowhere: this model cannot chat</source>
        <translation>无：此模型不能对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="113"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="114"/>
        <source>Architecture</source>
        <translation>架构</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="115"/>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="116"/>
        <source>Quantization</source>
        <translation>量化</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="116"/>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="117"/>
        <source>Trained context</source>
        <translation>训练上下文</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="118"/>
        <source>Layers</source>
        <translation>层数</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="121"/>
        <source>Licence</source>
        <translation>许可证</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="122"/>
        <source>not in the catalog: see the model&apos;s own page</source>
        <translation>不在模型目录中：请查看该模型自己的页面</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="124"/>
        <source>Sees pictures</source>
        <translation>识别图片</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="125"/>
        <source>Files</source>
        <translation>文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="126"/>
        <source>Fit on this machine</source>
        <translation>在本机上的适配</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="127"/>
        <source>Context when loaded</source>
        <translation>加载时的上下文</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="128"/>
        <source>Layers on the GPU</source>
        <translation>GPU 上的层数</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="129"/>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="130"/>
        <source>Memory needed</source>
        <translation>所需内存</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/details.py" line="131"/>
        <source>Chat template from</source>
        <translation>对话模板来源</translation>
    </message>
</context>
<context>
    <name>ModelsView</name>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="119"/>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="129"/>
        <source>Model catalog</source>
        <translation>模型目录</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="163"/>
        <source>Filter these models (name, kind, quant)</source>
        <translation>筛选这些模型（名称、类型、量化）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="164"/>
        <source>Filter the model list</source>
        <translation>筛选模型列表</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="175"/>
        <source>Details…</source>
        <translation>详情…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="177"/>
        <source>Show the selected model&apos;s details: architecture, files, fit</source>
        <translation>显示所选模型的详情：架构、文件、适配</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="187"/>
        <source>Import GGUF…</source>
        <translation>导入 GGUF…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="188"/>
        <source>Import a local GGUF file</source>
        <translation>导入本地 GGUF 文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="190"/>
        <source>Load</source>
        <translation>加载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="191"/>
        <source>Load the selected model into memory</source>
        <translation>将所选模型加载到内存</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="193"/>
        <source>Use in chat</source>
        <translation>在聊天中使用</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="195"/>
        <source>Use the selected model in the chat</source>
        <translation>在聊天中使用所选模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="197"/>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="198"/>
        <source>Download the selected model</source>
        <translation>下载所选模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="200"/>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="201"/>
        <source>Pause the download (resume continues it)</source>
        <translation>暂停下载（继续时从中断处接着下载）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="203"/>
        <source>Stop for now and keep the downloaded part; Download continues from there</source>
        <translation>暂时停止并保留已下载部分；再次下载时从该处继续</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="206"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="208"/>
        <source>Cancel the download and delete its partial files</source>
        <translation>取消下载并删除其未完成的文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="211"/>
        <source>Stop the download (running or paused) and delete what was downloaded so far</source>
        <translation>停止下载（进行中或已暂停）并删除目前已下载的内容</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="215"/>
        <source>Retry</source>
        <translation>重试</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="217"/>
        <source>Load the selected model again, although it crashed on every load</source>
        <translation>再次加载所选模型（尽管它每次加载都崩溃）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="220"/>
        <source>It crashed each time it loaded; after fixing or replacing the file, try again</source>
        <translation>它每次加载都崩溃；修复或替换文件后再试</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="224"/>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="225"/>
        <source>Remove the selected model</source>
        <translation>移除所选模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="230"/>
        <source>Download progress</source>
        <translation>下载进度</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="298"/>
        <source>This machine: </source>
        <translation>本机：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="338"/>
        <source>runs on {0} — leaves this device</source>
        <translation>在 {0} 上运行 — 数据会离开本设备</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="351"/>
        <source>broken: crashed on every load</source>
        <translation>已损坏：每次加载都崩溃</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="369"/>
        <source>%1 will be loaded again at its next use.</source>
        <translation>%1 将在下次使用时重新加载。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="379"/>
        <source>It crashed every time it loaded: %1</source>
        <translation>它每次加载都崩溃：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="394"/>
        <location filename="../../desktop/ui/models/view.py" line="399"/>
        <source>Imported in place: </source>
        <translation>原位导入：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="415"/>
        <source>SHA-256 verified at download: </source>
        <translation>下载时已校验 SHA-256：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="448"/>
        <source>Import a GGUF model (for a vision model, select its mmproj projector too)</source>
        <translation>导入 GGUF 模型（视觉模型请同时选择其 mmproj 投影器）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="450"/>
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF 模型 (*.gguf)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="464"/>
        <source>Importing </source>
        <translation>正在导入 </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="471"/>
        <source>Imported </source>
        <translation>已导入 </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="489"/>
        <source>Download this model first: </source>
        <translation>请先下载此模型：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="495"/>
        <source>%1 is an embedding model: it cannot chat. Documents → New collection uses it to index files.</source>
        <translation>%1 是嵌入模型，不能用于对话。请在“文档 → 新建文档集”中用它为文件建立索引。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="499"/>
        <source>%1 cannot chat.</source>
        <translation>%1 不能用于对话。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="522"/>
        <source>Reading the details of %1…</source>
        <translation>正在读取 %1 的详情…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="548"/>
        <source>loading…</source>
        <translation>加载中…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="560"/>
        <source>Remove model</source>
        <translation>移除模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="562"/>
        <source>Remove %1? Downloaded files are deleted; imported files are only forgotten.</source>
        <translation>移除 %1？下载的文件将被删除；导入的文件只会从列表中移除。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="580"/>
        <source>Removed </source>
        <translation>已移除 </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="601"/>
        <source>Cancel download</source>
        <translation>取消下载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="603"/>
        <source>Cancel the download of %1 and delete what was downloaded so far? Pause keeps it instead.</source>
        <translation>取消 %1 的下载并删除目前已下载的内容？若要保留，请使用“暂停”。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/downloads.py" line="145"/>
        <source>Still deleting the cancelled download of </source>
        <translation>仍在删除已取消的下载：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/downloads.py" line="177"/>
        <source>starting…</source>
        <translation>正在开始…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/downloads.py" line="197"/>
        <source>cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/downloads.py" line="234"/>
        <source>Finished before it could be cancelled; Remove deletes it: </source>
        <translation>取消前已下载完成；可用“移除”删除：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/downloads.py" line="240"/>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/downloads.py" line="243"/>
        <source>Cancelled %1; deleted %2 of partial download</source>
        <translation>已取消 %1；删除了 %2 的未完成下载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/downloads.py" line="123"/>
        <location filename="../../desktop/ui/models/downloads.py" line="253"/>
        <location filename="../../desktop/ui/models/downloads.py" line="273"/>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/downloads.py" line="291"/>
        <source>Installed and verified: </source>
        <translation>已安装并校验：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models/view.py" line="628"/>
        <source>loaded</source>
        <translation>已加载</translation>
    </message>
    <message>
        <source>Download the selected model from the Hub</source>
        <translation>从模型仓库下载所选模型</translation>
    </message>
</context>
<context>
    <name>NetworkMode</name>
    <message>
        <source>EdgeDesk is offline by your organization&apos;s policy (ForceOffline): nothing is downloaded or searched. Importing a .gguf file still works.</source>
        <translation>EdgeDesk 因贵组织的策略（ForceOffline）处于离线模式：不会下载或搜索任何内容。导入 .gguf 文件仍然可用。</translation>
    </message>
    <message>
        <source>EdgeDesk is offline: the environment variable EDGEDESK_OFFLINE is set. Start EdgeDesk without it to download or search; importing a .gguf file still works.</source>
        <translation>EdgeDesk 处于离线模式：设置了环境变量 EDGEDESK_OFFLINE。要下载或搜索，请在不设置该变量的情况下启动 EdgeDesk；导入 .gguf 文件仍然可用。</translation>
    </message>
    <message>
        <source>EdgeDesk is offline: it was started with --offline. Start it without --offline to download or search; importing a .gguf file still works.</source>
        <translation>EdgeDesk 处于离线模式：启动时使用了 --offline。要下载或搜索，请不带 --offline 启动；导入 .gguf 文件仍然可用。</translation>
    </message>
    <message>
        <source>EdgeDesk is offline: “Offline” is ticked in Settings (Network). Untick it to download or search; importing a .gguf file still works.</source>
        <translation>EdgeDesk 处于离线模式：“设置”（网络）中勾选了“离线”。要下载或搜索，请取消勾选；导入 .gguf 文件仍然可用。</translation>
    </message>
    <message>
        <source>Model downloads are turned off by your organization&apos;s policy (AllowDownloads). Import a .gguf file you already have instead.</source>
        <translation>贵组织的策略（AllowDownloads）已关闭模型下载。请改为导入已有的 .gguf 文件。</translation>
    </message>
    <message>
        <source>Model downloads are turned off (allow_downloads = false in settings.toml). Import a .gguf file you already have instead.</source>
        <translation>模型下载已关闭（settings.toml 中 allow_downloads = false）。请改为导入已有的 .gguf 文件。</translation>
    </message>
</context>
<context>
    <name>NewCollectionDialog</name>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="154"/>
        <source>New collection</source>
        <translation>新建文档集</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="159"/>
        <source>Name of the collection</source>
        <translation>文档集名称</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="162"/>
        <source>Embedding model</source>
        <translation>嵌入模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="170"/>
        <source>not downloaded</source>
        <translation>未下载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="177"/>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="180"/>
        <source>Import a file…</source>
        <translation>导入文件…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="181"/>
        <source>Use an embedding model (.gguf) on this computer</source>
        <translation>使用此电脑上的嵌入模型（.gguf）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="185"/>
        <source>Embedding model:</source>
        <translation>嵌入模型：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="201"/>
        <source>Import an embedding model</source>
        <translation>导入嵌入模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="201"/>
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF 模型 (*.gguf)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="246"/>
        <source>No embedding model is available: import one on the Models screen.</source>
        <translation>没有可用的嵌入模型：请在“模型”页面导入一个。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="248"/>
        <source>Documents are embedded with %1 on this device.</source>
        <translation>文档将在本机用 %1 生成嵌入。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="254"/>
        <source>%1 is not downloaded yet: it is downloaded first (%2), then your documents are indexed.</source>
        <translation>%1 尚未下载：将先下载（%2），然后为你的文档建立索引。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="262"/>
        <source>Create</source>
        <translation>创建</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/documents/new_collection.py" line="264"/>
        <source>Download and create</source>
        <translation>下载并创建</translation>
    </message>
</context>
<context>
    <name>NewPassphraseDialog</name>
    <message>
        <location filename="../../desktop/ui/settings/new_passphrase.py" line="53"/>
        <source>Encrypt with a passphrase</source>
        <translation>使用密码短语加密</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/new_passphrase.py" line="74"/>
        <source>Passphrase</source>
        <translation>密码短语</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/new_passphrase.py" line="75"/>
        <source>Passphrase again</source>
        <translation>再次输入密码短语</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/new_passphrase.py" line="84"/>
        <source>Encrypt</source>
        <translation>加密</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/new_passphrase.py" line="57"/>
        <source>Your organization requires encrypted data (policy EncryptAtRest), and this computer has no OS keyring to keep the encryption key in.</source>
        <translation>您的组织要求数据加密（策略 EncryptAtRest），而这台电脑没有可用的系统密钥环来保存加密密钥。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/new_passphrase.py" line="62"/>
        <source>This computer has no OS keyring to keep the encryption key in, so your data was not encrypted.</source>
        <translation>这台电脑没有可用的系统密钥环来保存加密密钥，因此您的数据尚未加密。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/new_passphrase.py" line="67"/>
        <source>Choose a passphrase instead: EdgeDesk asks for it once each time it starts. Without it nobody, not even you, can open your conversations again, so keep it somewhere safe.</source>
        <translation>请改用密码短语：EdgeDesk 每次启动时会询问一次。没有它，任何人（包括您自己）都无法再打开您的对话，请妥善保管。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/new_passphrase.py" line="72"/>
        <source>%1 %2</source>
        <translation>%1%2</translation>
    </message>
</context>
<context>
    <name>ParametersPanel</name>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="138"/>
        <source>The longest answer, in tokens</source>
        <translation>回答的最大长度（词元）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="142"/>
        <source>Sample only from the most likely tokens that together reach this probability (1 = off)</source>
        <translation>只从累计概率达到此值的最可能词元中采样（1 = 关闭）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="147"/>
        <source>Off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="148"/>
        <source>Sample only from this many most likely tokens (0 = off)</source>
        <translation>只从这么多个最可能的词元中采样（0 = 关闭）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="151"/>
        <source>Leave out tokens less likely than this share of the most likely one (0 = off)</source>
        <translation>排除概率低于最可能词元该比例的词元（0 = 关闭）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="154"/>
        <source>Make recently used tokens less likely (1 = off)</source>
        <translation>降低最近用过的词元的概率（1 = 关闭）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="157"/>
        <source>Random</source>
        <translation>随机</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="160"/>
        <source>The same seed, question and settings give the same answer; Random picks a new one each time</source>
        <translation>相同的种子、问题和设置会得到相同的回答；“随机”每次选一个新种子</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="167"/>
        <source>Auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="171"/>
        <source>Tokens the model keeps in mind, this chat&apos;s question and history included; Auto fits it to this machine. Another value reloads the model.</source>
        <translation>模型能记住的词元数，包括此对话的问题和历史；“自动”按本机适配。改为其他值会重新加载模型。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="179"/>
        <source>Defaults</source>
        <translation>默认值</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="180"/>
        <source>Put every parameter back to its default</source>
        <translation>将所有参数恢复为默认值</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="183"/>
        <source>Max tokens</source>
        <translation>最大词元数</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="184"/>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="185"/>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="186"/>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="187"/>
        <source>Repeat penalty</source>
        <translation>重复惩罚</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="188"/>
        <source>Seed</source>
        <translation>种子</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="189"/>
        <source>Context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/parameters_panel.py" line="190"/>
        <source>Experts</source>
        <translation>专家</translation>
    </message>
</context>
<context>
    <name>PassphraseDialog</name>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="334"/>
        <source>Unlock EdgeDesk</source>
        <translation>解锁 EdgeDesk</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="338"/>
        <source>Your conversations and documents are encrypted with a passphrase. Enter it to open them (asked once per session).</source>
        <translation>您的对话和文档已用密码短语加密。请输入密码短语以打开它们（每次会话只问一次）。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="345"/>
        <source>Passphrase</source>
        <translation>密码短语</translation>
    </message>
</context>
<context>
    <name>PasteServers</name>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="188"/>
        <source>Paste an mcp.json</source>
        <translation>粘贴 mcp.json</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="191"/>
        <source>Paste the servers as an mcp.json holds them (LM Studio, Cursor, Claude Desktop and VS Code write them this way):</source>
        <translation>按 mcp.json 的格式粘贴服务器（LM Studio、Cursor、Claude Desktop 和 VS Code 都这样写）：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="207"/>
        <source>Add servers</source>
        <translation>添加服务器</translation>
    </message>
</context>
<context>
    <name>PortField</name>
    <message>
        <location filename="../../desktop/ui/server/port_field.py" line="48"/>
        <source>Port </source>
        <translation>端口 </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/port_field.py" line="49"/>
        <source>Server port</source>
        <translation>服务器端口</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/port_field.py" line="51"/>
        <source>The port the API server listens on; applies when the server starts.</source>
        <translation>API 服务器监听的端口；在服务器启动时生效。</translation>
    </message>
</context>
<context>
    <name>RequestList</name>
    <message>
        <location filename="../../desktop/ui/server/request_list.py" line="33"/>
        <source>just now</source>
        <translation>刚刚</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/request_list.py" line="35"/>
        <source>%1 min ago</source>
        <translation>%1 分钟前</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/request_list.py" line="39"/>
        <source>%1 h ago</source>
        <translation>%1 小时前</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/request_list.py" line="52"/>
        <source>%1→%2 tokens</source>
        <translation>%1→%2 个词元</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/request_list.py" line="56"/>
        <source>key %1</source>
        <translation>密钥 %1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/request_list.py" line="63"/>
        <source>failed mid-stream: %1</source>
        <translation>流式输出中途失败：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/request_list.py" line="89"/>
        <source>Filter by key, model or status</source>
        <translation>按密钥、模型或状态筛选</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/request_list.py" line="90"/>
        <source>Filter requests</source>
        <translation>筛选请求</translation>
    </message>
</context>
<context>
    <name>ServerForm</name>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="72"/>
        <source>Add a tool server</source>
        <translation>添加工具服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="72"/>
        <source>Edit a tool server</source>
        <translation>编辑工具服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="75"/>
        <source>e.g. files</source>
        <translation>例如 files</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="78"/>
        <source>Command (runs on this computer)</source>
        <translation>命令（在此电脑上运行）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="78"/>
        <source>URL (a server on the network)</source>
        <translation>URL（网络上的服务器）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="85"/>
        <source>KEY=VALUE, one a line (optional)</source>
        <translation>KEY=VALUE，每行一个（可选）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="91"/>
        <source>optional; kept in the OS keyring, not in a file</source>
        <translation>可选；保存在系统密钥环中，不写入文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="96"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="97"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="98"/>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="99"/>
        <source>Environment</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="100"/>
        <source>URL</source>
        <translation>URL</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="101"/>
        <source>Bearer token</source>
        <translation>Bearer 令牌</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/server_form.py" line="124"/>
        <source>kept as it is unless you type a new one</source>
        <translation>保持不变，除非你输入新的</translation>
    </message>
</context>
<context>
    <name>ServerView</name>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="220"/>
        <source>Local API server</source>
        <translation>本地 API 服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="179"/>
        <source>Start the server with EdgeDesk</source>
        <translation>随 EdgeDesk 启动服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="187"/>
        <source>Allowed browser origins, comma-separated (none by default)</source>
        <translation>允许的浏览器来源，用逗号分隔（默认无）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="189"/>
        <source>Allowed origins</source>
        <translation>允许的来源</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="190"/>
        <source>Save origins</source>
        <translation>保存来源</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="203"/>
        <source>No requests yet. Start the server and call it from another program: each request is listed here.</source>
        <translation>还没有请求。启动服务器并从其他程序调用它：每个请求都会列在这里。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="447"/>
        <source>No requests yet. The server is running: call it from another program (the examples above show how), and each request is listed here.</source>
        <translation>还没有请求。服务器正在运行：从其他程序调用它（上方的示例说明了方法），每个请求都会列在这里。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="252"/>
        <source>kept for 1 day</source>
        <translation>保留 1 天</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="254"/>
        <source>kept for %1 days</source>
        <translation>保留 %1 天</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="256"/>
        <source>kept until deleted; set a retention period in Settings</source>
        <translation>保留至删除；可在设置中设定保留期限</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="260"/>
        <source>Requests (the log keeps no content). Note: /v1/responses stores its prompts and answers unless a request says store: false — %1.</source>
        <translation>请求（日志不记录内容）。注意：/v1/responses 会保存提示和回答，除非请求中指定 store: false —— %1。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="278"/>
        <source>Copy address</source>
        <translation>复制地址</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="298"/>
        <source>Port %1 saved; the running server keeps its port until it is restarted.</source>
        <translation>端口 %1 已保存；正在运行的服务器在重新启动前仍使用原端口。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="301"/>
        <source>Port %1 saved.</source>
        <translation>端口 %1 已保存。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="319"/>
        <source>Edit scope…</source>
        <translation>编辑权限范围…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="320"/>
        <source>Edit the selected key&apos;s scope</source>
        <translation>编辑所选密钥的权限范围</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="337"/>
        <source>The new API key</source>
        <translation>新的 API 密钥</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="338"/>
        <source>Copy key</source>
        <translation>复制密钥</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="339"/>
        <source>Copy the new API key</source>
        <translation>复制新的 API 密钥</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="369"/>
        <source>Code snippet</source>
        <translation>代码示例</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="467"/>
        <source>Port %1 is used by another program. Type another port beside the address and start the server again.</source>
        <translation>端口 %1 已被其他程序占用。请在地址旁输入另一个端口，然后再次启动服务器。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="474"/>
        <source>Port %1 is used by another program. Port %2 is free and filled in beside the address: press Start server to use it, or type another.</source>
        <translation>端口 %1 已被其他程序占用。端口 %2 空闲，已填入地址旁：按“启动服务器”即可使用，或输入其他端口。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="511"/>
        <source>No API keys yet. Every request needs one: New key… makes it.</source>
        <translation>还没有 API 密钥。每个请求都需要一个：点“新建密钥…”创建。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="513"/>
        <source>No API keys; this server answers without one (--no-auth).</source>
        <translation>没有 API 密钥；此服务器无需密钥即可应答（--no-auth）。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="531"/>
        <location filename="../../desktop/ui/server/view.py" line="571"/>
        <source>Pick at least one endpoint for the key.</source>
        <translation>请为该密钥至少选择一个接口。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="551"/>
        <source>New key for %1: copy it now, it is shown only while this screen is open.</source>
        <translation>%1 的新密钥：请立即复制，它只在此页面打开期间显示。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="587"/>
        <source>Changed the scope of the key for %1; it applies to its next request.</source>
        <translation>已更改 %1 的密钥权限范围；从其下一个请求起生效。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="200"/>
        <source>Request log</source>
        <translation>请求日志</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="267"/>
        <location filename="../../desktop/ui/server/view.py" line="420"/>
        <source>Start server</source>
        <translation>启动服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="269"/>
        <source>Start or stop the server</source>
        <translation>启动或停止服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="271"/>
        <location filename="../../desktop/ui/server/view.py" line="421"/>
        <source>Stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="274"/>
        <source>Server address</source>
        <translation>服务器地址</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="279"/>
        <source>Copy the server address</source>
        <translation>复制服务器地址</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="309"/>
        <source>API keys</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="317"/>
        <source>New key…</source>
        <translation>新建密钥…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="322"/>
        <source>Revoke</source>
        <translation>吊销</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="374"/>
        <source>Client to set up</source>
        <translation>要设置的客户端</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="377"/>
        <source>Copy snippet</source>
        <translation>复制代码</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="378"/>
        <source>Copy the code snippet</source>
        <translation>复制代码片段</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="383"/>
        <source>Use it from</source>
        <translation>在以下工具中使用</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="404"/>
        <source>No chat model is installed yet: download or import one on the Models screen, then use its id in place of %1.</source>
        <translation>尚未安装聊天模型：请在“模型”页面下载或导入一个，然后用它的 ID 替换 %1。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="409"/>
        <source>%1 is a chat model on this device; any id from /v1/models works.</source>
        <translation>%1 是本机上的聊天模型；/v1/models 列出的任何 ID 都可以使用。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="420"/>
        <source>Stop server</source>
        <translation>停止服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="421"/>
        <source>● Running</source>
        <translation>● 运行中</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="642"/>
        <source>Saved; applies the next time the server starts.</source>
        <translation>已保存，下次启动服务器时生效。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="228"/>
        <source>Server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="233"/>
        <source>Usage</source>
        <translation>用量</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/view.py" line="564"/>
        <source>Select a key in the list first.</source>
        <translation>请先在列表中选择一个密钥。</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="58"/>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="65"/>
        <source>Data location</source>
        <translation>数据位置</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="74"/>
        <source>Encryption</source>
        <translation>加密</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="76"/>
        <source>Keep models loaded for</source>
        <translation>模型保持加载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="77"/>
        <source>GPU layers</source>
        <translation>GPU 层数</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="78"/>
        <source>Context length</source>
        <translation>上下文长度</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="79"/>
        <source>Network</source>
        <translation>网络</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="80"/>
        <source>Delete chats after</source>
        <translation>对话保留期限</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="81"/>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="82"/>
        <source>Language (after a restart)</source>
        <translation>语言（重启后生效）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="83"/>
        <source>Tray</source>
        <translation>托盘</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="88"/>
        <location filename="../../desktop/ui/settings/dialog.py" line="146"/>
        <source>Language changes apply the next time EdgeDesk starts.</source>
        <translation>语言更改将在下次启动 EdgeDesk 时生效。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="157"/>
        <source>Turn encryption off?</source>
        <translation>关闭加密？</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="159"/>
        <source>Your conversations and document indexes will be stored as plain files, readable by anyone who gets a copy of them or of this computer&apos;s disk. Decrypt your data now?</source>
        <translation>你的对话和文档索引将以普通文件保存，任何拿到这些文件或这台电脑硬盘副本的人都能读取。现在解密你的数据吗？</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="173"/>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="174"/>
        <source>Unload right away</source>
        <translation>立即卸载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="178"/>
        <location filename="../../desktop/ui/settings/dialog.py" line="185"/>
        <source>Auto (fit to this machine)</source>
        <translation>自动（适配本机）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="187"/>
        <source>Offline: make no network connection at all</source>
        <translation>离线：完全不建立网络连接</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="191"/>
        <source> days</source>
        <translation> 天</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="192"/>
        <source>Keep chats forever</source>
        <translation>永久保留对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="196"/>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="197"/>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="198"/>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="207"/>
        <source>Closing the window keeps the server running in the tray</source>
        <translation>关闭窗口后服务器继续在托盘中运行</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/dialog.py" line="226"/>
        <location filename="../../desktop/ui/settings/dialog.py" line="231"/>
        <source>set by your organization</source>
        <translation>由您的组织设置</translation>
    </message>
</context>
<context>
    <name>SourceViewer</name>
    <message>
        <location filename="../../desktop/ui/chat/source_viewer.py" line="61"/>
        <source>Source [%1]: %2</source>
        <translation>来源 [%1]：%2</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/source_viewer.py" line="79"/>
        <source>Cited document</source>
        <translation>引用的文档</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/source_viewer.py" line="84"/>
        <source>Open file</source>
        <translation>打开文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/source_viewer.py" line="86"/>
        <source>Open the file in the program this computer opens it with</source>
        <translation>用本机默认的程序打开该文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/source_viewer.py" line="105"/>
        <source>The file cannot be shown here (%1); this is the passage as it was cited.</source>
        <translation>无法在此显示该文件（%1）；以下是引用时的段落。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/source_viewer.py" line="111"/>
        <source>The file is not on this computer any more; this is the passage as it was cited.</source>
        <translation>该文件已不在此电脑上；以下是引用时的段落。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/source_viewer.py" line="123"/>
        <source>The file has changed since it was indexed; this is the passage as it was cited.</source>
        <translation>该文件自建立索引后已更改；以下是引用时的段落。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat/source_viewer.py" line="165"/>
        <source>No program on this computer opens this file; open it yourself: %1</source>
        <translation>此电脑上没有可打开该文件的程序，请手动打开：%1</translation>
    </message>
</context>
<context>
    <name>SwitchProgress</name>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="238"/>
        <source>Encryption</source>
        <translation>加密</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="240"/>
        <source>Encrypting your data…</source>
        <translation>正在加密您的数据…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="240"/>
        <source>Decrypting your data…</source>
        <translation>正在解密您的数据…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="256"/>
        <source>Copied into a new file…</source>
        <translation>已复制到新文件…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="257"/>
        <source>The copy checked row for row…</source>
        <translation>副本已逐行核对…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="258"/>
        <source>The new file took the old one&apos;s place…</source>
        <translation>新文件已替换旧文件…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="270"/>
        <source>Encryption not changed</source>
        <translation>加密设置未更改</translation>
    </message>
</context>
<context>
    <name>ToolApproval</name>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="69"/>
        <source>Allow tools?</source>
        <translation>允许使用工具？</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="76"/>
        <source>The model wants to run {tool} on the tool server {server}.</source>
        <translation>模型想在工具服务器 {server} 上运行 {tool}。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="81"/>
        <source>The model wants to make {calls} tool calls ({distinct} different) on {servers}.</source>
        <translation>模型想在 {servers} 上进行 {calls} 次工具调用（其中 {distinct} 种不同）。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="87"/>
        <source>Round {step} of at most {limit}: after {limit} rounds of tool calls the model must answer in words.</source>
        <translation>第 {step} 轮，最多 {limit} 轮：{limit} 轮工具调用之后，模型必须用文字作答。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="99"/>
        <source>Arguments:</source>
        <translation>参数：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="110"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="110"/>
        <source>Tool</source>
        <translation>工具</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="110"/>
        <source>Server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="110"/>
        <source>Arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="127"/>
        <source>Arguments of the selected call</source>
        <translation>所选调用的参数</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="135"/>
        <source>Always allow these tools (not asked again)</source>
        <translation>始终允许这些工具（不再询问）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="138"/>
        <source>Allow all</source>
        <translation>全部允许</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="139"/>
        <source>Allow ticked only</source>
        <translation>仅允许勾选的</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="141"/>
        <source>Deny all</source>
        <translation>全部拒绝</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/approval.py" line="142"/>
        <source>Stop the answer</source>
        <translation>停止回答</translation>
    </message>
</context>
<context>
    <name>ToolsView</name>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="66"/>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="74"/>
        <source>Server or tool</source>
        <translation>服务器或工具</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="74"/>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="74"/>
        <source>Command or URL</source>
        <translation>命令或网址</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="76"/>
        <source>Tool servers</source>
        <translation>工具服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="104"/>
        <source>Start and list tools</source>
        <translation>启动并列出工具</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="106"/>
        <source>Reload</source>
        <translation>重新载入</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="108"/>
        <source>Ask again</source>
        <translation>再次询问</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="110"/>
        <source>Forget the selected &apos;Always for this tool&apos; answer: its next call asks again</source>
        <translation>忘记所选的“始终允许此工具”答复：下次调用时会再次询问</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="113"/>
        <source>Add server…</source>
        <translation>添加服务器…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="115"/>
        <source>Paste mcp.json…</source>
        <translation>粘贴 mcp.json…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="117"/>
        <location filename="../../desktop/ui/tools/view.py" line="186"/>
        <source>Edit…</source>
        <translation>编辑…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="118"/>
        <source>Edit the selected tool server</source>
        <translation>编辑所选工具服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="120"/>
        <location filename="../../desktop/ui/tools/view.py" line="187"/>
        <source>Remove…</source>
        <translation>移除…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="122"/>
        <source>Remove the selected tool server</source>
        <translation>移除所选工具服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="172"/>
        <source>Its log ends with:</source>
        <translation>它的日志最后几行：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="206"/>
        <source>Saved {name}. Start and list tools to try it.</source>
        <translation>已保存 {name}。点击“启动并列出工具”试用。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="216"/>
        <source>{name} is provided by your organization and cannot be removed.</source>
        <translation>{name} 由你的组织提供，无法移除。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="223"/>
        <source>Remove tool server</source>
        <translation>移除工具服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="225"/>
        <source>Remove the tool server {name}? Chats can no longer call its tools; its token, if any, is deleted from the OS keyring.</source>
        <translation>移除工具服务器 {name}？对话将无法再调用它的工具；它的令牌（如有）会从系统密钥环中删除。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="241"/>
        <source>Removed the tool server {name}.</source>
        <translation>已移除工具服务器 {name}。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="257"/>
        <source>Added {names}. Start and list tools to try them.</source>
        <translation>已添加 {names}。点击“启动并列出工具”试用。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="299"/>
        <source>Its log</source>
        <translation>其日志</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="299"/>
        <source>(nothing written)</source>
        <translation>（未写入任何内容）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="313"/>
        <source>Select a tool under &apos;Always allowed&apos; first.</source>
        <translation>请先在“始终允许”下选择一个工具。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="327"/>
        <source>Built-in (documents)</source>
        <translation>内置（文档）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="327"/>
        <source>no approval</source>
        <translation>无需批准</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="333"/>
        <source>refused: {why}</source>
        <translation>已拒绝：{why}</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="335"/>
        <source>failed: {why}</source>
        <translation>失败：{why}</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="337"/>
        <source>allowed</source>
        <translation>已允许</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="353"/>
        <source>not honoured: approval required</source>
        <translation>未生效：需要批准</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="355"/>
        <source>runs without asking</source>
        <translation>无需询问即可运行</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="357"/>
        <source>Always allowed</source>
        <translation>始终允许</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="370"/>
        <source>Your organization requires approval of every tool call.</source>
        <translation>你的组织要求每次调用工具前都须批准。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="372"/>
        <source>Only the tool servers your organization lists may run.</source>
        <translation>只能运行你的组织列出的工具服务器。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="374"/>
        <source>No tool servers yet: Add server… or Paste mcp.json… adds one.</source>
        <translation>还没有工具服务器：用“添加服务器…”或“粘贴 mcp.json…”添加。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="174"/>
        <source>The built-in documents tools come with EdgeDesk and cannot be removed.</source>
        <translation>内置的文档工具随 EdgeDesk 提供，无法移除。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/tools/view.py" line="175"/>
        <source>Select a tool server you added to edit or remove it.</source>
        <translation>请选择一个你添加的工具服务器来编辑或移除。</translation>
    </message>
</context>
<context>
    <name>Tray</name>
    <message>
        <location filename="../../desktop/ui/shell/tray.py" line="33"/>
        <source>Show EdgeDesk</source>
        <translation>显示 EdgeDesk</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/tray.py" line="35"/>
        <source>Quit (stops the server)</source>
        <translation>退出（停止服务器）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/shell/tray.py" line="59"/>
        <source>The server keeps running. Quit from the tray icon&apos;s menu.</source>
        <translation>服务器仍在运行。可从托盘图标的菜单退出。</translation>
    </message>
</context>
<context>
    <name>UsageTab</name>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="162"/>
        <location filename="../../desktop/ui/server/usage_tab.py" line="229"/>
        <source>Requests</source>
        <translation>请求</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="163"/>
        <source>Tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="164"/>
        <source>Total time (ms), p50 and p99</source>
        <translation>总耗时（毫秒），p50 与 p99</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="165"/>
        <source>Error rate (%)</source>
        <translation>错误率（%）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="173"/>
        <source>Usage per key or model</source>
        <translation>按密钥或模型的用量</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="185"/>
        <source>Time range</source>
        <translation>时间范围</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="187"/>
        <source>Last 24 hours</source>
        <translation>最近 24 小时</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="188"/>
        <source>Last 7 days</source>
        <translation>最近 7 天</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="189"/>
        <source>Last 30 days</source>
        <translation>最近 30 天</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="193"/>
        <source>Group by</source>
        <translation>分组方式</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="194"/>
        <source>By key</source>
        <translation>按密钥</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="195"/>
        <source>By model</source>
        <translation>按模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="196"/>
        <source>By client</source>
        <translation>按客户端</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="197"/>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="198"/>
        <source>Export the usage table as CSV</source>
        <translation>将用量表导出为 CSV</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="230"/>
        <source>Errors</source>
        <translation>错误</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="231"/>
        <source>Prompt tokens</source>
        <translation>提示词元</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="232"/>
        <source>Completion tokens</source>
        <translation>生成词元</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="233"/>
        <source>TTFT p50</source>
        <translation>首词元 p50</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="234"/>
        <source>Total p50 / p99</source>
        <translation>总耗时 p50 / p99</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="235"/>
        <source>tok/s</source>
        <translation>词元/秒</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="236"/>
        <source>Trend</source>
        <translation>趋势</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="293"/>
        <source>%1 requests, %2 errors</source>
        <translation>%1 个请求，%2 个错误</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="304"/>
        <source>Usage is not being recorded: your organization turned it off (policy CollectUsage). Earlier usage is still shown.</source>
        <translation>未在记录用量：你的组织已将其关闭（策略 CollectUsage）。仍显示之前的用量。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="309"/>
        <source>Usage is not being recorded (collect_usage = false in the settings). Earlier usage is still shown.</source>
        <translation>未在记录用量（设置中 collect_usage = false）。仍显示之前的用量。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="428"/>
        <source>Requests per slot: %1</source>
        <translation>每个时段的请求数：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="436"/>
        <source>(no key)</source>
        <translation>（无密钥）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="439"/>
        <source>EdgeDesk window</source>
        <translation>EdgeDesk 窗口</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="436"/>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="437"/>
        <source>other</source>
        <translation>其他</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="466"/>
        <source>Total: %1</source>
        <translation>合计：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="473"/>
        <source>No requests</source>
        <translation>没有请求</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="475"/>
        <source>%1 % of %2 requests failed</source>
        <translation>%2 个请求中有 %1 % 失败</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="485"/>
        <source>Export usage</source>
        <translation>导出用量</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="487"/>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="497"/>
        <source>Could not export: %1</source>
        <translation>无法导出：%1</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server/usage_tab.py" line="500"/>
        <source>Exported to %1</source>
        <translation>已导出到 %1</translation>
    </message>
</context>
<context>
    <name>encryption</name>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="378"/>
        <source>Enter the passphrase.</source>
        <translation>请输入密码短语。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/encryption.py" line="383"/>
        <source>That passphrase does not open your data. Nothing was changed; try again.</source>
        <translation>该密码短语无法打开您的数据。未做任何更改，请重试。</translation>
    </message>
</context>
<context>
    <name>new_passphrase</name>
    <message>
        <location filename="../../desktop/ui/settings/new_passphrase.py" line="26"/>
        <source>Enter a passphrase.</source>
        <translation>请输入密码短语。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings/new_passphrase.py" line="28"/>
        <source>The two passphrases differ. Type the same passphrase twice; nothing was changed.</source>
        <translation>两次输入的密码短语不一致。请输入两次相同的密码短语；没有做任何更改。</translation>
    </message>
</context>
<context>
    <name>run_app</name>
    <message>
        <location filename="../../desktop/ui/shell/app.py" line="101"/>
        <source>Moving your data…</source>
        <translation>正在迁移您的数据…</translation>
    </message>
</context>
<context>
    <name>StreamingAnswer</name>
    <message>
        <location filename="../../desktop/ui/chat/stream.py" line="80"/>
        <source>Reading the conversation: %1 of %2 tokens (%3%)…</source>
        <translation>正在读取对话：已读 %1 / %2 个词元（%3%）…</translation>
    </message>
</context>
</TS>
