<?xml version='1.0' encoding='utf-8'?>
<TS version="2.1" language="zh_CN">
<context>
    <name>CatalogTableModel</name>
    <message>
        <location filename="../../desktop/ui/qmodels.py" line="50" />
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/qmodels.py" line="51" />
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/qmodels.py" line="52" />
        <source>Tier</source>
        <translation>档位</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/qmodels.py" line="53" />
        <source>Quant</source>
        <translation>量化</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/qmodels.py" line="54" />
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/qmodels.py" line="55" />
        <source>Fit</source>
        <translation>适配</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/qmodels.py" line="56" />
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/qmodels.py" line="117" />
        <source>installed</source>
        <translation>已安装</translation>
    </message>
</context>
<context>
    <name>ChatSidebar</name>
    <message>
        <location filename="../../desktop/ui/chat_sidebar.py" line="51" />
        <location filename="../../desktop/ui/chat_sidebar.py" line="52" />
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_sidebar.py" line="53" />
        <source>New chat (Ctrl+N)</source>
        <translation>新对话 (Ctrl+N)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_sidebar.py" line="56" />
        <location filename="../../desktop/ui/chat_sidebar.py" line="57" />
        <source>Search chats</source>
        <translation>搜索对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_sidebar.py" line="64" />
        <source>Conversations</source>
        <translation>对话列表</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_sidebar.py" line="72" />
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_sidebar.py" line="74" />
        <source>Delete chat</source>
        <translation>删除对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_sidebar.py" line="76" />
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_sidebar.py" line="77" />
        <source>Export chat as Markdown</source>
        <translation>将对话导出为 Markdown</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_sidebar.py" line="107" />
        <source>Export chat</source>
        <translation>导出对话</translation>
    </message>
</context>
<context>
    <name>ChatView</name>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="99" />
        <source>Model for this chat</source>
        <translation>此对话使用的模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="100" />
        <source>Choose a model…</source>
        <translation>选择模型…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="105" />
        <source>Temperature </source>
        <translation>温度 </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="106" />
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="108" />
        <source>Ephemeral</source>
        <translation>临时</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="109" />
        <source>Ephemeral chats are never saved to disk</source>
        <translation>临时对话永远不会保存到磁盘</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="110" />
        <source>Ephemeral chat</source>
        <translation>临时对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="117" />
        <source>System prompt (optional)</source>
        <translation>系统提示词（可选）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="118" />
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="145" />
        <source>Message the model — Ctrl+Enter to send</source>
        <translation>向模型发送消息 — Ctrl+Enter 发送</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="146" />
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="149" />
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="151" />
        <source>Send message</source>
        <translation>发送消息</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="152" />
        <source>Send (Ctrl+Enter)</source>
        <translation>发送 (Ctrl+Enter)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="154" />
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="155" />
        <source>Stop generating</source>
        <translation>停止生成</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="156" />
        <source>Stop (Esc)</source>
        <translation>停止 (Esc)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="306" />
        <source>Choose a model for this chat first (Models → Import or download one).</source>
        <translation>请先为此对话选择模型（模型 → 导入或下载）。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/chat_view.py" line="335" />
        <source>Editing a message: send to replace it and everything after it; Esc cancels.</source>
        <translation>正在编辑消息：发送后将替换该消息及其后的所有内容；按 Esc 取消。</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../../desktop/ui/main_window.py" line="82" />
        <source>Chats</source>
        <translation>聊天</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/main_window.py" line="83" />
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/main_window.py" line="84" />
        <source>Server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/main_window.py" line="92" />
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/main_window.py" line="128" />
        <source>Model: </source>
        <translation>模型：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/main_window.py" line="128" />
        <source>No model loaded</source>
        <translation>未加载模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/main_window.py" line="130" />
        <source>Memory: </source>
        <translation>内存：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/main_window.py" line="132" />
        <source>● Offline</source>
        <translation>● 离线</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/main_window.py" line="132" />
        <source>● Online</source>
        <translation>● 在线</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/main_window.py" line="134" />
        <source>No network connection will be made</source>
        <translation>不会建立任何网络连接</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/main_window.py" line="135" />
        <source>Downloads may connect to the model hub</source>
        <translation>下载可能会连接模型仓库</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/main_window.py" line="171" />
        <source>Settings not saved</source>
        <translation>设置未保存</translation>
    </message>
</context>
<context>
    <name>MessageWidget</name>
    <message>
        <location filename="../../desktop/ui/message_widget.py" line="53" />
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/message_widget.py" line="53" />
        <source>Assistant</source>
        <translation>助手</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/message_widget.py" line="60" />
        <location filename="../../desktop/ui/message_widget.py" line="110" />
        <source>▸ Reasoning</source>
        <translation>▸ 推理过程</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/message_widget.py" line="61" />
        <source>Show reasoning</source>
        <translation>显示推理过程</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/message_widget.py" line="77" />
        <source>Message text</source>
        <translation>消息内容</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/message_widget.py" line="84" />
        <source>Copy message</source>
        <translation>复制消息</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/message_widget.py" line="85" />
        <source>Copy code</source>
        <translation>复制代码</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/message_widget.py" line="86" />
        <source>code</source>
        <translation>代码</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/message_widget.py" line="88" />
        <source>Edit and resend</source>
        <translation>编辑并重新发送</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/message_widget.py" line="90" />
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/message_widget.py" line="110" />
        <source>▾ Reasoning</source>
        <translation>▾ 推理过程</translation>
    </message>
</context>
<context>
    <name>ModelsView</name>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="51" />
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="59" />
        <source>Model catalog</source>
        <translation>模型目录</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="75" />
        <source>Import GGUF…</source>
        <translation>导入 GGUF…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="76" />
        <source>Import a local GGUF file</source>
        <translation>导入本地 GGUF 文件</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="78" />
        <source>Load</source>
        <translation>加载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="79" />
        <source>Load the selected model into memory</source>
        <translation>将所选模型加载到内存</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="81" />
        <source>Use in chat</source>
        <translation>在聊天中使用</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="83" />
        <source>Use the selected model in the chat</source>
        <translation>在聊天中使用所选模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="85" />
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="86" />
        <source>Download the selected model</source>
        <translation>下载所选模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="88" />
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="89" />
        <source>Pause the download (resume continues it)</source>
        <translation>暂停下载（继续时从中断处接着下载）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="94" />
        <source>Download progress</source>
        <translation>下载进度</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="118" />
        <source>This machine: </source>
        <translation>本机：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="147" />
        <source>Import a GGUF model</source>
        <translation>导入 GGUF 模型</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="148" />
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF 模型 (*.gguf)</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="156" />
        <source>Imported </source>
        <translation>已导入 </translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="169" />
        <source>Download this model first: </source>
        <translation>请先下载此模型：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="183" />
        <source>loading…</source>
        <translation>加载中…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="222" />
        <source>starting…</source>
        <translation>正在开始…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="243" />
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="253" />
        <source>Installed and verified: </source>
        <translation>已安装并校验：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/models_view.py" line="258" />
        <source>loaded</source>
        <translation>已加载</translation>
    </message>
</context>
<context>
    <name>ServerView</name>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="74" />
        <source>Local API server</source>
        <translation>本地 API 服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="78" />
        <source>Start the server with EdgeDesk</source>
        <translation>随 EdgeDesk 启动服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="86" />
        <source>Allowed browser origins, comma-separated (none by default)</source>
        <translation>允许的浏览器来源，用逗号分隔（默认无）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="88" />
        <source>Allowed origins</source>
        <translation>允许的来源</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="89" />
        <source>Save origins</source>
        <translation>保存来源</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="96" />
        <source>Code snippet</source>
        <translation>代码示例</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="98" />
        <source>Use it from code</source>
        <translation>在代码中使用</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="100" />
        <source>Requests (no content is recorded)</source>
        <translation>请求记录（不记录内容）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="104" />
        <source>Request log</source>
        <translation>请求日志</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="113" />
        <location filename="../../desktop/ui/server_view.py" line="156" />
        <source>Start server</source>
        <translation>启动服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="115" />
        <source>Start or stop the server</source>
        <translation>启动或停止服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="117" />
        <location filename="../../desktop/ui/server_view.py" line="157" />
        <source>Stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="120" />
        <source>Server address</source>
        <translation>服务器地址</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="121" />
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="122" />
        <source>Copy the server address</source>
        <translation>复制服务器地址</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="133" />
        <source>API keys</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="136" />
        <source>New key…</source>
        <translation>新建密钥…</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="138" />
        <source>Revoke</source>
        <translation>吊销</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="156" />
        <source>Stop server</source>
        <translation>停止服务器</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="157" />
        <source>● Running</source>
        <translation>● 运行中</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="211" />
        <source>Key copied to the clipboard; it is shown only once: </source>
        <translation>密钥已复制到剪贴板，仅显示这一次：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="216" />
        <source>New API key</source>
        <translation>新建 API 密钥</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="217" />
        <source>Name of the client (e.g. vscode):</source>
        <translation>客户端名称（例如 vscode）：</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/server_view.py" line="235" />
        <source>Saved; applies the next time the server starts.</source>
        <translation>已保存，下次启动服务器时生效。</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="59" />
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="68" />
        <source>Data location</source>
        <translation>数据位置</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="71" />
        <source>Keep models loaded for</source>
        <translation>模型保持加载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="72" />
        <source>GPU layers</source>
        <translation>GPU 层数</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="73" />
        <source>Context length</source>
        <translation>上下文长度</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="74" />
        <source>Network</source>
        <translation>网络</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="74" />
        <source>Delete chats after</source>
        <translation>对话保留期限</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="75" />
        <source>Theme</source>
        <translation>主题</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="75" />
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="80" />
        <source>Language changes apply the next time EdgeDesk starts.</source>
        <translation>语言更改将在下次启动 EdgeDesk 时生效。</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="94" />
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="95" />
        <source>Unload right away</source>
        <translation>立即卸载</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="99" />
        <location filename="../../desktop/ui/settings_dialog.py" line="105" />
        <source>Auto (fit to this machine)</source>
        <translation>自动（适配本机）</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="107" />
        <source>Offline: make no network connection at all</source>
        <translation>离线：完全不建立网络连接</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="111" />
        <source> days</source>
        <translation> 天</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="112" />
        <source>Keep chats forever</source>
        <translation>永久保留对话</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="115" />
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="115" />
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="116" />
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <location filename="../../desktop/ui/settings_dialog.py" line="134" />
        <location filename="../../desktop/ui/settings_dialog.py" line="139" />
        <source>set by your organization</source>
        <translation>由您的组织设置</translation>
    </message>
</context>
</TS>