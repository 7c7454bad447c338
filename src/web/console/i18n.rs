//! The console's two languages: English and Simplified Chinese, chosen per browser (the
//! `jobwheel_lang` cookie, else the browser's `Accept-Language`).

use actix_web::http::header;
use actix_web::HttpRequest;

/// Name of the cookie that remembers a browser's language.
pub const LANG_COOKIE: &str = "jobwheel_lang";

/// A language of the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// English.
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// The browser's choice: its cookie, else the first language it accepts that we have.
    pub fn of(req: &HttpRequest) -> Lang {
        if let Some(lang) = req.cookie(LANG_COOKIE).and_then(|c| Lang::parse(c.value())) {
            return lang;
        }
        let accepted = req
            .headers()
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        accepted
            .split(',')
            .filter_map(|part| Lang::parse(part.split(';').next().unwrap_or_default().trim()))
            .next()
            .unwrap_or(Lang::En)
    }

    fn parse(text: &str) -> Option<Lang> {
        let text = text.to_ascii_lowercase();
        if text == "en" || text.starts_with("en-") {
            Some(Lang::En)
        } else if text == "zh" || text.starts_with("zh-") {
            Some(Lang::Zh)
        } else {
            None
        }
    }

    /// The BCP 47 tag of the page (`<html lang>`).
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-CN",
        }
    }

    /// The page text for `key` in this language; an unknown key shows `?`, and a unit test
    /// keeps every key the templates use in the table.
    pub fn t(self, key: &str) -> &'static str {
        match TEXTS.binary_search_by(|(k, _, _)| (*k).cmp(key)) {
            Ok(i) => match self {
                Lang::En => TEXTS[i].1,
                Lang::Zh => TEXTS[i].2,
            },
            Err(_) => "?",
        }
    }
}

/// `(key, English, Chinese)`, sorted by key (a test checks).
const TEXTS: &[(&str, &str, &str)] = &[
    ("action", "Action", "操作"),
    ("actions", "Actions", "操作"),
    ("actor", "Actor", "Actor"),
    ("actor_backing_off", "backing off", "退避中"),
    ("actor_running", "running", "运行中"),
    ("actor_stopped", "stopped", "已停止"),
    ("actor_unanswered", "not answering", "无应答"),
    ("actors", "Actors", "Actor"),
    ("add_decision_node", "Add decision node", "添加判断节点"),
    ("add_edge", "Add edge", "添加连线"),
    ("add_group", "New group", "新增执行器"),
    ("add_job", "New job", "新增任务"),
    ("add_job_node", "Add job node", "添加任务节点"),
    ("add_user", "New user", "新增用户"),
    ("add_workflow", "New workflow", "新增工作流"),
    ("addresses", "Executor addresses (optional, comma-separated)", "执行器地址（可选，逗号分隔）"),
    ("addresses_hint", "Empty: the job's routing strategy picks one.", "留空：按路由策略选择。"),
    ("admin_node", "Admin", "调度中心"),
    ("admission", "Admission", "准入"),
    ("admission_queued", "Waiting for a slot of its instance cap", "等待实例名额"),
    ("alarm_email", "Alarm e-mails", "报警邮件"),
    ("alarm_webhook", "Alarm webhook", "报警 Webhook"),
    ("all", "All", "全部"),
    ("all_wf_runs", "All runs of the workflow", "该工作流的全部运行"),
    ("api_docs", "API reference", "API 文档"),
    ("api_docs_intro", "Every endpoint of the REST API under /api/v1, generated from the code. Calls need a session (log in) or an API token: Authorization: Bearer <token>.", "REST API /api/v1 的全部接口，由代码生成。调用需要登录会话或 API 令牌：Authorization: Bearer <token>。"),
    ("api_error_shape", "Every error answers JSON {error, field?}: the message, and the input field to blame when there is one.", "所有错误都返回 JSON {error, field?}：错误信息，以及出错的输入字段（如有）。"),
    ("api_json", "OpenAPI document (JSON)", "OpenAPI 文档（JSON）"),
    ("api_no_login", "no login needed", "无需登录"),
    ("api_optional", "optional", "可选"),
    ("api_parameters", "Parameters", "参数"),
    ("api_request_body", "Request body", "请求体"),
    ("api_required", "required", "必填"),
    ("api_responses", "Responses", "响应"),
    ("api_schemas", "Schemas", "数据结构"),
    ("api_tokens", "API tokens", "API 令牌"),
    ("app_name", "App name", "AppName"),
    ("app_name_fixed", "Fixed once the group exists: its executors register under it.", "执行器组创建后不可修改：执行器以此名称注册。"),
    ("attempt", "Attempts", "尝试次数"),
    ("audit", "Audit log", "操作日志"),
    ("author", "Author", "负责人"),
    ("auto", "Automatic", "自动注册"),
    ("basics", "Basics", "基础配置"),
    ("block", "Blocking strategy", "阻塞处理策略"),
    ("block_COVER_EARLY", "Cover early", "覆盖之前调度"),
    ("block_DISCARD_LATER", "Discard later", "丢弃后续调度"),
    ("block_SERIAL_EXECUTION", "Serial execution", "单机串行"),
    ("browser_zone", "Times in your browser's time zone", "时间按浏览器所在时区显示"),
    ("cancel", "Cancel", "取消"),
    ("cancel_run", "Cancel run", "取消运行"),
    ("cause_call_failed", "The call to the executor got no answer", "调用执行器无应答"),
    ("cause_failed", "The run failed on", "运行失败于"),
    ("cause_not_admitted", "Not run: the instance cap was reached", "未运行：已达到实例上限"),
    ("cause_not_sent", "No executor was called", "未调用任何执行器"),
    ("cause_refused", "The executor refused the run", "执行器拒绝了运行"),
    ("change_password", "Change password", "修改密码"),
    ("changes", "Changes", "变更"),
    ("chart_title", "Runs per day", "每日调度"),
    ("children", "Child job ids", "子任务ID"),
    ("choose_job", "Choose a job…", "选择任务…"),
    ("claimed_fires", "Claimed fires", "已认领的触发"),
    ("clear_all", "All of them", "清理所有"),
    ("clear_rule", "Which runs", "清理方式"),
    ("clear_runs", "Clear runs", "清理日志"),
    ("close", "Close", "关闭"),
    ("cluster_admins", "Admins of the cluster", "集群中的调度中心"),
    ("code", "code", "代码"),
    ("confirm_cancel_run", "Cancel run", "确认取消运行"),
    ("confirm_cordon", "Drain: send no new runs to", "排空：不再向其发送新任务"),
    ("confirm_delete", "Delete job", "确认删除任务"),
    ("confirm_delete_group", "Delete executor group", "确认删除执行器"),
    ("confirm_delete_user", "Delete user", "确认删除用户"),
    ("confirm_delete_workflow", "Delete workflow", "确认删除工作流"),
    ("confirm_kill", "Kill run", "确认终止"),
    ("confirm_mark_success", "Count this failed node as succeeded", "确认将该失败节点标记为成功"),
    ("confirm_password", "Repeat the new password", "确认新密码"),
    ("confirm_restore", "Restore version", "确认恢复版本"),
    ("confirm_revoke", "Revoke token", "确认吊销令牌"),
    ("context", "Context", "上下文"),
    ("copy", "Copy", "复制"),
    ("cordon", "Drain", "排空"),
    ("cordoned_since", "draining since", "排空中，始于"),
    ("create_token", "Create token", "创建令牌"),
    ("created", "Created", "创建时间"),
    ("current_password", "Current password", "当前密码"),
    ("dashboard", "Dashboard", "运行报表"),
    ("database", "Database", "数据库"),
    ("days", "days", "天"),
    ("db_down", "not answering", "不可用"),
    ("db_pool", "Connections", "连接"),
    ("db_up", "answering", "可用"),
    ("deadline", "Deadline", "截止时间"),
    ("decision", "Decision", "判断结果"),
    ("delete", "Delete", "删除"),
    ("description", "Description", "任务描述"),
    ("download_log", "Download", "下载"),
    ("draining", "draining", "排空中"),
    ("edge_from", "From", "起点"),
    ("edge_to", "To", "终点"),
    ("edge_when", "When", "条件"),
    ("edges", "Edges", "连线"),
    ("edit", "Edit", "编辑"),
    ("edit_group", "Edit group", "编辑执行器"),
    ("edit_job", "Edit job", "编辑任务"),
    ("edit_user", "Edit user", "编辑用户"),
    ("edit_workflow", "Edit workflow", "编辑工作流"),
    ("error_400", "The request cannot be used", "请求无法处理"),
    ("error_401", "Please log in", "请先登录"),
    ("error_403", "Not permitted", "无权访问"),
    ("error_404", "Not found", "页面或数据不存在"),
    ("error_409", "It clashes with what is there", "与现有数据冲突"),
    ("error_413", "Too large", "请求过大"),
    ("error_429", "Too many attempts", "尝试次数过多"),
    ("error_500", "Something went wrong", "系统内部错误"),
    ("error_502", "The executor did not answer well", "执行器未正常响应"),
    ("error_503", "Not available now", "暂不可用"),
    ("execution", "Execution", "任务配置"),
    ("executor", "Executor", "执行器地址"),
    ("executor_selector", "Executor selector", "执行器选择器"),
    ("executor_selector_hint", "Runs only on executors whose labels match, e.g. gpu=true, zone!=a, region in (eu,us), ssd exists. Empty: any executor of the group.", "仅在标签匹配的执行器上运行，例如 gpu=true、zone!=a、region in (eu,us)、ssd exists。留空：执行器组内任一执行器。"),
    ("executors", "Executors", "执行器管理"),
    ("executors_online", "Executors online", "在线执行器"),
    ("expires", "Expires", "过期时间"),
    ("expression", "CEL expression", "CEL 表达式"),
    ("fail", "Failed", "失败"),
    ("filter", "Filter", "查询"),
    ("finished_at", "Finished", "结束时间"),
    ("following", "following…", "实时跟踪中…"),
    ("from", "From", "开始时间"),
    ("gantt_ran", "Ran", "运行"),
    ("gantt_waited", "Waited", "等待"),
    ("glue", "GLUE", "GLUE"),
    ("glue_BEAN", "BEAN (a handler in the executor)", "BEAN（执行器中的处理器）"),
    ("glue_GLUE_GROOVY", "GLUE(Java)", "GLUE(Java)"),
    ("glue_GLUE_NODEJS", "GLUE(Node.js)", "GLUE(Node.js)"),
    ("glue_GLUE_PHP", "GLUE(PHP)", "GLUE(PHP)"),
    ("glue_GLUE_POWERSHELL", "GLUE(PowerShell)", "GLUE(PowerShell)"),
    ("glue_GLUE_PYTHON", "GLUE(Python 3)", "GLUE(Python 3)"),
    ("glue_GLUE_PYTHON2", "GLUE(Python 2)", "GLUE(Python 2)"),
    ("glue_GLUE_SHELL", "GLUE(Shell)", "GLUE(Shell)"),
    ("glue_bean", "This job runs the BEAN handler", "该任务运行执行器中的 BEAN 处理器"),
    ("glue_bean_hint", "in its executor and has no script. To give it one, change its run mode in its form:", "，没有脚本。如需脚本，请在任务表单中修改运行模式："),
    ("glue_compare", "Compare with the editor", "与编辑器对比"),
    ("glue_in_editor", "In the editor", "编辑器中"),
    ("glue_keys", "Tab indents by 4 spaces, Shift+Tab outdents, Ctrl+F searches; press Esc, then Tab, to leave the editor.", "Tab 缩进 4 个空格，Shift+Tab 取消缩进，Ctrl+F 搜索；先按 Esc 再按 Tab 可离开编辑器。"),
    ("glue_no_versions", "No versions saved yet.", "暂无历史版本。"),
    ("glue_remark", "Remark", "源码备注"),
    ("glue_remark_hint", "What changed (required)", "本次修改说明（必填）"),
    ("glue_saved", "Saved as a new version.", "已保存为新版本。"),
    ("glue_type", "Run mode", "运行模式"),
    ("glue_versions", "Versions (last 30)", "历史版本（最近 30 个）"),
    ("graph", "Graph", "流程图"),
    ("graph_empty", "Add nodes to see the graph.", "添加节点后显示流程图。"),
    ("graph_valid", "Valid", "校验通过"),
    ("group", "Executor group", "执行器"),
    ("group_max_instances_hint", "The most runs of this group's jobs open at once across every admin (0 = no cap); a job's own cap holds too. Beyond it the group's policy decides (QUEUE uses each job's queue bound and wait).", "整个集群内此执行器组所有任务同时运行的最大实例数（0 表示不限）；任务自身的上限同样生效。超出时按组的策略处理（QUEUE 使用各任务的队列上限与等待时间）。"),
    ("group_token", "Group access token (optional)", "执行器访问令牌（可选）"),
    ("group_token_hint", "Empty keeps the current one; executors of this group then use it instead of the global token.", "留空则保持不变；设置后该执行器使用此令牌代替全局令牌。"),
    ("handle_time", "Finished at", "执行时间"),
    ("handler", "Handler", "JobHandler"),
    ("heartbeat", "beat", "心跳"),
    ("idle", "idle", "空闲"),
    ("in_use", "in use", "使用中"),
    ("instance_overflow", "Beyond the cap", "超出上限时"),
    ("instance_queue_max", "Queue bound (QUEUE)", "队列上限（QUEUE）"),
    ("instance_queue_ttl", "Queue wait, seconds (QUEUE)", "排队最长等待（秒，QUEUE）"),
    ("instances_now", "Instances now", "当前实例"),
    ("instances_open", "Open runs", "运行中"),
    ("instances_queued", "queued fires", "排队中的触发"),
    ("job", "Job", "任务"),
    ("job_id", "Job id", "任务ID"),
    ("job_picker_hint", "An id or part of a description", "任务 ID 或描述中的文字"),
    ("job_picker_none", "No job you may see matches this.", "没有匹配的任务（或无权查看）。"),
    ("jobs", "Jobs", "任务管理"),
    ("jobs_running", "Jobs scheduled", "运行中任务"),
    ("jobs_stopped", "Jobs stopped", "停止的任务"),
    ("join", "Join", "汇合方式"),
    ("keep_last", "Keep only the last", "仅保留最近"),
    ("kill", "Kill", "终止任务"),
    ("kind_DECISION", "Decision", "判断"),
    ("kind_JOB", "Job", "任务"),
    ("language", "Language", "语言"),
    ("last_error", "Last error", "最近错误"),
    ("last_run", "Last run", "最近运行"),
    ("last_saved", "Last saved", "最近保存"),
    ("last_used", "Last used", "最近使用"),
    ("legend", "Legend", "图例"),
    ("load_no_limit", "no limit", "无上限"),
    ("load_queued", "queued", "排队"),
    ("load_running", "running", "运行"),
    ("log", "Log", "执行日志"),
    ("log_complete", "complete", "已结束"),
    ("log_in", "Log in", "登录"),
    ("log_out", "Log out", "退出"),
    ("log_retention_days", "Keep runs (days)", "运行记录保留天数"),
    ("log_retention_hint", "0 days: the admin's setting; 0 runs: no count bound. Both bounds hold when both are set.", "天数为 0：使用调度中心的设置；条数为 0：不限条数。两者都设置时同时生效。"),
    ("log_retention_runs", "Keep newest runs", "保留最新运行条数"),
    ("login_title", "Log in to jobwheel", "登录 jobwheel"),
    ("mailbox_wait", "Mailbox wait", "邮箱等待"),
    ("manual", "Manual list", "手动录入"),
    ("manual_addresses", "Addresses (manual list; comma-separated)", "机器地址（手动录入，逗号分隔）"),
    ("mark_success", "Mark succeeded", "标记成功"),
    ("max_concurrent_runs", "Max concurrent runs", "最大并发运行数"),
    ("max_instances", "Max concurrent instances (cluster)", "最大并发实例数（集群）"),
    ("max_instances_hint", "The most runs of this job open at once across every admin (0 = no cap), claimed with each run row. Beyond it: SKIP records the fire as skipped; QUEUE makes it wait for a slot (up to the bound, for at most the wait); REPLACE closes and kills the oldest run; ALLOW runs it anyway.", "整个集群内此任务同时运行的最大实例数（0 表示不限），随每条运行记录一起占用名额。超出时：SKIP 记录为已跳过；QUEUE 排队等待名额（不超过队列上限与最长等待）；REPLACE 结束并终止最早的运行；ALLOW 照常运行。"),
    ("max_queued", "Max queued triggers", "最多排队触发数"),
    ("max_queued_hint", "SERIAL_EXECUTION only: triggers beyond this many waiting on an executor are refused at once. 0 = unbounded. Java executors ignore it.", "仅用于串行执行：执行器上等待的触发超过此数时立即拒绝。0 表示不限。Java 执行器忽略此项。"),
    ("menu", "Menu", "菜单"),
    ("message", "Message", "消息"),
    ("misfire", "Misfire strategy", "调度过期策略"),
    ("misfire_DO_NOTHING", "Do nothing", "忽略"),
    ("misfire_FIRE_ONCE_NOW", "Fire once now", "立即执行一次"),
    ("never", "—", "—"),
    ("never_expires", "never", "永不过期"),
    ("never_used", "never", "从未使用"),
    ("new_password", "New password", "新密码"),
    ("next", "Next", "下一页"),
    ("next_fire", "Next fire", "下次触发"),
    ("next_fire_times", "Next fire times", "下次执行时间"),
    ("no_entries", "No changes recorded.", "暂无记录。"),
    ("no_group_jobs", "This executor group has no jobs yet: create them on the Jobs page.", "该执行器下还没有任务：请先在任务管理中创建。"),
    ("no_groups", "No executor groups yet.", "暂无执行器。"),
    ("no_jobs", "No jobs match.", "没有符合条件的任务。"),
    ("no_runs", "No runs match.", "没有符合条件的日志。"),
    ("no_tokens", "No tokens.", "暂无令牌。"),
    ("no_wf_runs", "No runs yet.", "暂无运行记录。"),
    ("no_workflows", "No workflows match.", "没有符合条件的工作流。"),
    ("node_alive", "alive", "存活"),
    ("node_key", "Key", "节点标识"),
    ("node_leaving", "leaving", "退出中"),
    ("node_params", "Params (may hold ${context.KEY}, ${workflow.params})", "参数（可用 ${context.KEY}、${workflow.params}）"),
    ("node_silent", "silent", "无心跳"),
    ("nodes", "Nodes", "节点"),
    ("nodes_count", "nodes", "个节点"),
    ("none_online", "none", "无"),
    ("not_in_group", "not in this group", "不属于该执行器"),
    ("not_saved", "Not saved", "未保存"),
    ("older_than", "Older than", "清理"),
    ("oldest_waited", "oldest waited", "最久等待"),
    ("online", "Online executors", "在线机器地址"),
    ("open_job", "Open job", "打开任务"),
    ("open_run", "Open the run", "查看运行"),
    ("optional", "optional", "可选"),
    ("output", "Output", "输出"),
    ("overflow_ALLOW", "Run it anyway", "仍然运行"),
    ("overflow_QUEUE", "Queue it", "排队等待"),
    ("overflow_REPLACE", "Replace the oldest run", "替换最早的运行"),
    ("overflow_SKIP", "Skip the fire", "跳过本次调度"),
    ("overlap_hint", "When a run is due while the max are running: SKIP it, QUEUE it (up to the queue limit), CANCEL_OLD the oldest, or ALLOW it anyway.", "运行数已达上限时新的运行：SKIP 跳过，QUEUE 排队（不超过队列上限），CANCEL_OLD 取消最早的运行，ALLOW 照常运行。"),
    ("overlap_policy", "Overlap policy", "重叠策略"),
    ("owner", "Owner", "所属用户"),
    ("page", "Page", "页码"),
    ("paging", "Pages", "分页"),
    ("param", "Parameter", "任务参数"),
    ("password", "Password", "密码"),
    ("password_changed", "Password changed. Other sessions have been logged out.", "密码已修改，其他会话已退出。"),
    ("password_reset", "Password reset; the user's sessions have ended.", "密码已重置，该用户的会话已退出。"),
    ("passwords_differ", "The two new passwords differ.", "两次输入的新密码不一致。"),
    ("pause", "Pause", "暂停"),
    ("paused", "Paused", "已暂停"),
    ("pending", "Pending", "待触发"),
    ("per_page", "Per page", "每页"),
    ("permitted_groups", "Permitted executor groups", "执行器权限"),
    ("permitted_hint", "A normal user sees and operates only these groups' jobs, runs and executors.", "普通用户只能查看和操作这些执行器的任务、日志和机器。"),
    ("previous", "Previous", "上一页"),
    ("problems", "Problems", "问题"),
    ("queue_max", "Queue limit", "队列上限"),
    ("queued_on_executors", "Queued on executors", "执行器上排队的触发"),
    ("range", "Range", "区间"),
    ("registration", "Registration", "注册方式"),
    ("remove", "Remove", "移除"),
    ("reset_password", "Reset password", "重置密码"),
    ("restarts", "Restarts", "重启次数"),
    ("restore", "Restore", "恢复"),
    ("result", "Result", "执行结果"),
    ("resume", "Resume", "继续"),
    ("retries", "Retries", "失败重试次数"),
    ("retries_left", "Retries left", "剩余重试次数"),
    ("retries_short", "Retries", "重试次数"),
    ("retry_interval", "Retry interval (s)", "重试间隔（秒）"),
    ("retry_run", "Retry", "重试"),
    ("revoke", "Revoke", "吊销"),
    ("role", "Role", "角色"),
    ("role_admin", "Administrator", "管理员"),
    ("role_normal", "Normal user", "普通用户"),
    ("route", "Routing strategy", "路由策略"),
    ("route_BUSYOVER", "Busy over", "忙碌转移"),
    ("route_CONSISTENT_HASH", "Consistent hash", "一致性HASH"),
    ("route_FAILOVER", "Failover", "故障转移"),
    ("route_FIRST", "First", "第一个"),
    ("route_LAST", "Last", "最后一个"),
    ("route_LEAST_FREQUENTLY_USED", "Least frequently used", "最不经常使用"),
    ("route_LEAST_RECENTLY_USED", "Least recently used", "最近最久未使用"),
    ("route_RANDOM", "Random", "随机"),
    ("route_ROUND", "Round robin", "轮询"),
    ("route_SHARDING_BROADCAST", "Sharding broadcast", "分片广播"),
    ("run", "Run", "调度日志"),
    ("run_again", "Run again", "再次运行"),
    ("run_control", "Concurrency", "并发与超时"),
    ("run_log", "Executor log", "执行日志"),
    ("run_timeout", "Run timeout (s, 0: none)", "运行超时（秒，0 不限）"),
    ("running", "Running", "进行中"),
    ("runs", "Runs", "调度日志"),
    ("runs_of_job", "All runs of the job", "该任务的全部日志"),
    ("runs_today", "Runs today", "今日调度"),
    ("save", "Save", "保存"),
    ("saved_at", "Saved at", "保存时间"),
    ("schedule", "Schedule", "调度"),
    ("schedule_CRON", "Cron expression", "CRON 表达式"),
    ("schedule_FIX_DELAY", "Fixed delay", "固定延迟"),
    ("schedule_FIX_RATE", "Fixed rate", "固定速度"),
    ("schedule_NONE", "None (run by hand or API)", "无（手动或 API 触发）"),
    ("schedule_conf", "Cron expression or seconds", "Cron 表达式或秒数"),
    ("schedule_type", "Schedule type", "调度类型"),
    ("scheduled", "Scheduled", "运行中"),
    ("shard", "shard", "分片"),
    ("shown", "shown", "条"),
    ("source", "Source", "源码"),
    ("start", "Start", "启动"),
    ("started_at", "Started", "开始时间"),
    ("state_CANCELLED", "Cancelled", "已取消"),
    ("state_FAILED", "Failed", "失败"),
    ("state_QUEUED", "Queued", "排队中"),
    ("state_RUNNING", "Running", "运行中"),
    ("state_SKIPPED", "Skipped", "已跳过"),
    ("state_SUCCEEDED", "Succeeded", "成功"),
    ("state_TIMED_OUT", "Timed out", "已超时"),
    ("state_WAITING", "Waiting", "等待中"),
    ("status", "Status", "状态"),
    ("stop", "Stop", "停止"),
    ("stopped", "Stopped", "已停止"),
    ("success", "Succeeded", "成功"),
    ("suspect", "suspect", "可疑"),
    ("suspect_since", "no answer since", "无应答，自"),
    ("system", "System", "系统"),
    ("target", "Target", "对象"),
    ("this_admin", "this one", "本实例"),
    ("time", "Time", "时间"),
    ("timeline", "Timeline", "时间线"),
    ("timeout_secs", "Timeout (s)", "任务超时时间（秒）"),
    ("timeout_short", "Timeout (s)", "超时（秒）"),
    ("timezone", "Time zone", "时区"),
    ("title", "Title", "名称"),
    ("to", "To", "结束时间"),
    ("token_name", "Name", "名称"),
    ("token_once", "Copy this token now: it is shown only once.", "请立即复制该令牌，它只显示这一次。"),
    ("token_rights", "A token acts with the rights of the user who created it. Send it as Authorization: Bearer <token>.", "令牌拥有创建者的权限。使用方式：Authorization: Bearer <token>。"),
    ("total", "Total", "共"),
    ("trigger", "Run once", "执行一次"),
    ("trigger_API", "API", "API触发"),
    ("trigger_CRON", "Cron", "Cron触发"),
    ("trigger_MANUAL", "Manual", "手动触发"),
    ("trigger_MISFIRE", "Misfire", "调度过期补偿"),
    ("trigger_PARENT", "Parent job", "父任务触发"),
    ("trigger_RETRY", "Retry", "失败重试触发"),
    ("trigger_WORKFLOW", "Workflow", "工作流触发"),
    ("trigger_msg", "Trigger", "调度备注"),
    ("trigger_once", "Run once", "执行一次"),
    ("trigger_time", "Triggered at", "调度时间"),
    ("trigger_type", "Trigger", "触发方式"),
    ("triggered", "Triggered.", "已触发。"),
    ("uncordon", "Resume", "恢复"),
    ("username", "Username", "用户名"),
    ("users", "Users", "用户管理"),
    ("version", "Version", "版本"),
    ("view", "View", "查看"),
    ("waiting_for_slot", "Waiting for an instance slot", "等待实例名额"),
    ("wf_description", "Description", "描述"),
    ("wf_name", "Name", "名称"),
    ("wf_params", "Params", "运行参数"),
    ("wf_params_hint", "What ${workflow.params} stands for in this run (optional).", "本次运行中 ${workflow.params} 的值（可选）。"),
    ("wf_runs", "Runs", "运行记录"),
    ("wf_triggered", "Not run:", "未运行："),
    ("why_failed", "Why it failed", "失败原因"),
    ("workflow", "Workflow", "工作流"),
    ("workflow_run", "Workflow run", "工作流运行"),
    ("workflows", "Workflows", "工作流"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_unique() {
        for pair in TEXTS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
    }

    /// Every `t("…")` in a template or a console module has both languages.
    #[test]
    fn every_key_in_use_is_translated() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts = Vec::new();
        for dir in ["templates", "src/web/console"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if !path.ends_with("i18n.rs") {
                    texts.push(std::fs::read_to_string(path).unwrap());
                }
            }
        }
        let mut used = 0;
        for text in &texts {
            for piece in text.split(".t(\"").skip(1) {
                let key = piece.split('"').next().unwrap();
                if key.is_empty() || key.contains(' ') {
                    continue;
                }
                used += 1;
                assert_ne!(Lang::En.t(key), "?", "no text for key {key:?}");
                assert!(!Lang::Zh.t(key).is_empty(), "no Chinese for {key:?}");
            }
        }
        assert!(used > 20, "found only {used} keys: is the scan broken?");
    }

    #[test]
    fn the_browser_choice_wins() {
        use actix_web::cookie::Cookie;
        use actix_web::test::TestRequest;
        let zh = TestRequest::default()
            .insert_header((header::ACCEPT_LANGUAGE, "zh-CN,zh;q=0.9,en;q=0.8"))
            .to_http_request();
        assert_eq!(Lang::of(&zh), Lang::Zh);
        let cookie = TestRequest::default()
            .insert_header((header::ACCEPT_LANGUAGE, "zh-CN"))
            .cookie(Cookie::new(LANG_COOKIE, "en"))
            .to_http_request();
        assert_eq!(Lang::of(&cookie), Lang::En);
        let other = TestRequest::default()
            .insert_header((header::ACCEPT_LANGUAGE, "fr-FR,de"))
            .to_http_request();
        assert_eq!(Lang::of(&other), Lang::En);
        assert_eq!(Lang::Zh.t("jobs"), "任务管理");
        assert_eq!(Lang::En.t("no-such-key"), "?");
    }
}
